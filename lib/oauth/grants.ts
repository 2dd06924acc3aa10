import { z } from "zod";
import { AppError } from "@/lib/http/errors";
import type { Tx } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { policySchema } from "@/contract";

/**
 * The credentials a person chose for a client, each with its approval mode and spending policy (docs/policies.md).
 * Consent grants `allowance` only once its ceremony (signing the allowance) exists: until then read or approve.
 */
export const grantSetSchema = z
  .array(z.object({ credentialId: z.string().min(1).max(100), mode: z.enum(["read", "approve"]), policy: policySchema.optional() }))
  .max(100)
  .refine((entries) => new Set(entries.map((entry) => entry.credentialId)).size === entries.length, "a credential may appear only once");
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
