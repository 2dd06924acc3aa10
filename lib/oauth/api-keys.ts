import { z } from "zod";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { randomBase62, randomId, sha256Hex } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { guarded, guardedOptions, requireStepUp } from "@/lib/auth/step-up";
import { API_KEY_PREFIX } from "@/contract";
import { visibleName } from "@/lib/text/visible-text";
import { auditAllowanceCreated, storeAllowance } from "@/lib/allowances/allowances";
import {
  boundGrantSet,
  boundGrantSetSchema,
  createGrant,
  describeGrantSet,
  grantSetApprovers,
  grantSetSchema,
  normalizedGrantSet,
  readyGrantSetAllowance,
} from "./grants";

/** 43 base62 characters carry 256 bits. */
const KEY_LENGTH = 43;

const keyName = z
  .string()
  .trim()
  .min(1, "Name the key")
  .max(100, "A key name may be at most 100 characters")
  .superRefine(visibleName("A key name"));

/** The key as issued: its name and grant set, an allowance in it signed by the person's key. */
export const apiKeyRequestSchema = z.object({ name: keyName, credentials: grantSetSchema });
export type ApiKeyRequest = z.infer<typeof apiKeyRequestSchema>;
/** The same key as its passkey approval binds it, before anything is signed: an allowance by its delegations' hashes. */
export const apiKeyChoiceSchema = z.object({ name: keyName, credentials: boundGrantSetSchema });
type ApiKeyChoice = z.infer<typeof apiKeyChoiceSchema>;

function normalized(choice: ApiKeyChoice) {
  return { name: choice.name, credentials: normalizedGrantSet(choice.credentials) };
}

/**
 * The passkey challenge for issuing exactly this key (name and grant set). With an allowance, only a passkey that
 * sealed that wallet's key may answer: the same tap unseals the key that signs it.
 */
export async function apiKeyOptions(userId: string, choice: ApiKeyChoice, clock: Clock = systemClock) {
  return guardedOptions(userId, guarded.issueApiKey(normalized(choice), await grantSetApprovers(userId, choice.credentials)), clock);
}

/**
 * Issues a personal API key: a client of kind api_key with one grant. The key
 * is returned once; only its SHA-256 is stored. An allowance in the grant set is
 * checked and its account given the DeleGator's code first; the key, its grant and
 * the allowance are then stored in one transaction, so a failed relay issues nothing.
 */
export async function issueApiKey(
  userId: string,
  request: ApiKeyRequest,
  assertion: AuthenticationResponseJSON | undefined,
  clock: Clock = systemClock,
) {
  const bound = { name: request.name, credentials: boundGrantSet(request.credentials) };
  await requireStepUp(userId, guarded.issueApiKey(normalized(bound)), assertion, clock);
  const allowance = await readyGrantSetAllowance(userId, request.credentials);
  const key = `${API_KEY_PREFIX}${randomBase62(KEY_LENGTH)}`;
  const now = clock();
  const clientId = randomId("k_");
  const { grantId, allowanceId } = await db().$transaction(async (tx) => {
    await tx.client.create({
      data: { id: clientId, kind: "api_key", name: request.name, userId, keyHash: sha256Hex(key), keyHint: key.slice(-4), createdAt: now },
    });
    const grantId = await createGrant(tx, { userId, clientId, scope: "mcp", credentials: request.credentials, now });
    return { grantId, allowanceId: allowance ? await storeAllowance(tx, allowance, grantId) : null };
  });
  await recordAudit(
    { type: "api_key.issued", userId, clientId, data: { name: request.name, credentials: describeGrantSet(request.credentials) } },
    clock,
  );
  if (allowance && allowanceId) await auditAllowanceCreated(allowance, allowanceId, grantId, clock);
  return { clientId, name: request.name, key };
}
