import { z } from "zod";
import { AppError } from "@/lib/http/errors";
import type { Tx } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { APPROVAL_MODES, policySchema } from "@/contract";
import { allowanceBindingSchema, readySignedAllowance, sealingPasskeys, signedAllowanceSchema } from "@/lib/allowances/ceremony";
import { allowanceBinding } from "@/lib/allowances/signing";
import type { ReadyAllowance } from "@/lib/allowances/allowances";

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
type BoundGrantSet = z.infer<typeof boundGrantSetSchema>;

/** One encoding per grant set, whatever order the page listed the credentials in. */
export function normalizedGrantSet<T extends { credentialId: string }>(entries: T[]): T[] {
  return [...entries].sort((a, b) => (a.credentialId < b.credentialId ? -1 : 1));
}

/** The grant set as its passkey approval was bound: each signed allowance by its delegations' hashes. */
export function boundGrantSet(credentials: GrantSet): BoundGrantSet {
  return credentials.map(({ allowance, ...entry }) => (allowance ? { ...entry, allowance: allowanceBinding(allowance) } : entry));
}

/**
 * The passkeys that may approve this grant set: with an allowance, only those that sealed that wallet's key, since
 * the same tap unseals the key that signs it; otherwise any of the person's (undefined).
 */
export async function grantSetApprovers(userId: string, credentials: BoundGrantSet): Promise<string[] | undefined> {
  const entry = credentials.find((candidate) => candidate.allowance);
  return entry ? sealingPasskeys(userId, entry.credentialId) : undefined;
}

/**
 * The allowance signed in an approved grant set, checked and with its account given the DeleGator's code (the relay):
 * ready to store in the transaction that creates the grant. Undefined when the set has none.
 */
export async function readyGrantSetAllowance(userId: string, credentials: GrantSet): Promise<ReadyAllowance | undefined> {
  const entry = credentials.find((candidate) => candidate.allowance);
  return entry?.allowance ? readySignedAllowance(userId, entry.credentialId, entry.allowance) : undefined;
}

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
