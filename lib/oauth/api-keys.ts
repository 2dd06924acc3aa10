import { z } from "zod";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { randomBase62, randomId, sha256Hex } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { guarded, guardedOptions, requireStepUp } from "@/lib/auth/step-up";
import { API_KEY_PREFIX } from "@/contract";
import { visibleName } from "@/lib/text/visible-text";
import { createGrant, describeGrantSet, grantSetSchema } from "./grants";

/** 43 base62 characters carry 256 bits. */
const KEY_LENGTH = 43;

export const apiKeyRequestSchema = z.object({
  name: z
    .string()
    .trim()
    .min(1, "Name the key")
    .max(100, "A key name may be at most 100 characters")
    .superRefine(visibleName("A key name")),
  // An allowance is signed with the wallet's key at consent; an API key's grant has read or approve.
  credentials: grantSetSchema.refine(
    (entries) => entries.every((entry) => entry.mode !== "allowance"),
    "an API key's wallets are read or approve; an allowance is signed when an application connects",
  ),
});
export type ApiKeyRequest = z.infer<typeof apiKeyRequestSchema>;

function normalized(request: ApiKeyRequest) {
  return { name: request.name, credentials: [...request.credentials].sort((a, b) => (a.credentialId < b.credentialId ? -1 : 1)) };
}

/** The passkey challenge for issuing exactly this key (name and grant set). */
export async function apiKeyOptions(userId: string, request: ApiKeyRequest, clock: Clock = systemClock) {
  return guardedOptions(userId, guarded.issueApiKey(normalized(request)), clock);
}

/**
 * Issues a personal API key: a client of kind api_key with one grant. The key
 * is returned once; only its SHA-256 is stored.
 */
export async function issueApiKey(
  userId: string,
  request: ApiKeyRequest,
  assertion: AuthenticationResponseJSON | undefined,
  clock: Clock = systemClock,
) {
  await requireStepUp(userId, guarded.issueApiKey(normalized(request)), assertion, clock);
  const key = `${API_KEY_PREFIX}${randomBase62(KEY_LENGTH)}`;
  const now = clock();
  const clientId = randomId("k_");
  await db().$transaction(async (tx) => {
    await tx.client.create({
      data: { id: clientId, kind: "api_key", name: request.name, userId, keyHash: sha256Hex(key), keyHint: key.slice(-4), createdAt: now },
    });
    await createGrant(tx, { userId, clientId, scope: "mcp", credentials: request.credentials, now });
  });
  await recordAudit(
    { type: "api_key.issued", userId, clientId, data: { name: request.name, credentials: describeGrantSet(request.credentials) } },
    clock,
  );
  return { clientId, name: request.name, key };
}
