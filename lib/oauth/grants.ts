import { z } from "zod";
import { AppError } from "@/lib/http/errors";
import type { Tx } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { APPROVAL_MODES, policySchema } from "@/contract";
import { allowanceBindingSchema, signedAllowanceSchema } from "@/lib/allowances/ceremony";

const entry = z.object({ credentialId: z.string().min(1).max(100), mode: z.enum(APPROVAL_MODES), policy: policySchema.optional() });

/**
 * A grant set whose `allowance` entries carry `allowance` (and only they do). One allowance per grant set: its
 * creation is one passkey tap, which unseals one wallet's key.
 */
function grantSetWith<A extends z.ZodType>(allowance: A) {
  return z
    .array(
      entry
        .extend({ allowance: allowance.optional() })
        .refine(
          (item) => (item.mode === "allowance") === (item.allowance !== undefined),
          "the allowance mode comes with the allowance the person signed, and only it",
        ),
    )
    .max(100)
    .refine((entries) => new Set(entries.map((item) => item.credentialId)).size === entries.length, "a credential may appear only once")
    .refine(
      (entries) => entries.filter((item) => item.mode === "allowance").length <= 1,
      "choose the allowance mode for one wallet at a time",
    );
}

/**
 * The credentials a person chose for a client, each with its approval mode and spending policy (docs/policies.md).
 * `allowance` only together with the allowance the person's key signed: no token or key can create, widen or renew
 * one (lib/allowances/ceremony.ts).
 */
export const grantSetSchema = grantSetWith(signedAllowanceSchema);
/** The same choice before signing, as the passkey approval binds it: each allowance by its delegations' hashes. */
export const boundGrantSetSchema = grantSetWith(allowanceBindingSchema);
export type GrantSet = z.infer<typeof grantSetSchema>;

/** Creates a grant after checking that every credential belongs to the user. */
export async function createGrant(
  tx: Tx,
  input: { userId: string; clientId: string; scope: string; credentials: GrantSet; now: Date },
): Promise<string> {
  const ids = input.credentials.map((entry) => entry.credentialId);
  const owned = await tx.credential.count({ where: { id: { in: ids }, userId: input.userId } });
  if (owned !== ids.length) throw new AppError("invalid_grant_set", "Every granted credential must be one of your own", 400);
  const grantId = randomId("g_");
  await tx.grant.create({
    data: {
      id: grantId,
      userId: input.userId,
      clientId: input.clientId,
      scope: input.scope,
      createdAt: input.now,
      credentials: {
        create: input.credentials.map((entry) => ({
          credentialId: entry.credentialId,
          mode: entry.mode,
          policy: JSON.stringify(entry.policy ?? {}),
        })),
      },
    },
  });
  return grantId;
}

/** The grant set in the form the audit log records. */
export function describeGrantSet(credentials: GrantSet) {
  return credentials.map((entry) => ({ credential: entry.credentialId, mode: entry.mode, policy: entry.policy ?? {} }));
}
