import { db } from "@/lib/db";
import { randomId, randomSecret } from "@/lib/crypto";
import { addSeconds, systemClock, type Clock } from "@/lib/clock";
import { answersOf, reading, runTransaction, type Query } from "@/lib/db/transaction-script";
import { AppError } from "@/lib/http/errors";

/** What a WebAuthn ceremony is for; a challenge is only good for its own purpose. */
export type ChallengePurpose =
  | "sign-up"
  | "sign-in"
  | "add-passkey"
  | "seal"
  | "consent"
  | "api-key"
  | "approval"
  | "approve-add-passkey"
  | "rename-passkey"
  | "remove-passkey"
  | "remove-wallet"
  | "rename-wallet"
  | "export"
  | "revoke-client"
  | "revoke-allowance"
  | "resume-allowance"
  | "return-agent-account"
  | "change-policy"
  | "give-allowance"
  | "address-book";

export const CHALLENGE_TTL_SECONDS = 5 * 60;

class ChallengeError extends AppError {
  constructor(message: string) {
    super("invalid_challenge", message, 400);
  }
}

export type IssuedChallenge = { challenge: string; expiresAt: Date };

/** Stores a fresh random challenge (server-side, single use, 5 minutes). */
export async function issueChallenge(
  purpose: ChallengePurpose,
  binding: { userId?: string | null; subject?: string | null; data?: unknown; allow?: string[] } = {},
  clock: Clock = systemClock,
): Promise<IssuedChallenge> {
  const now = clock();
  const challenge = randomSecret(32);
  const expiresAt = addSeconds(now, CHALLENGE_TTL_SECONDS);
  await db().webAuthnChallenge.create({
    data: {
      id: randomId("ch_"),
      purpose,
      challenge,
      userId: binding.userId ?? null,
      subject: binding.subject ?? null,
      data: binding.data === undefined ? null : JSON.stringify(binding.data),
      allow: binding.allow ? JSON.stringify(binding.allow) : null,
      createdAt: now,
      expiresAt,
    },
  });
  return { challenge, expiresAt };
}

/** The challenge a WebAuthn response answers, read from its clientDataJSON. */
export function challengeOf(clientDataJSON: string): string {
  try {
    const clientData = JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8")) as { challenge?: unknown };
    if (typeof clientData.challenge === "string") return clientData.challenge;
  } catch {
    // fall through
  }
  throw new ChallengeError("The passkey response is malformed");
}

/** `allow`: the passkeys that may answer it, when the ceremony named them (null: any passkey of the user). */
export type ConsumedChallenge = { challenge: string; userId: string | null; subject: string | null; data: unknown; allow: string[] | null };

// The spend returns what the challenge was bound to; the stored row is read apart only to say why one was refused.
const SPEND = `UPDATE "WebAuthnChallenge" SET "usedAt" = ?
  WHERE "challenge" = ? AND "purpose" = ? AND "usedAt" IS NULL AND "expiresAt" > ?
  RETURNING "userId", "subject", "data", "allow"`;

type BoundTo = { userId: string | null; subject: string | null; data: string | null; allow: string | null };

/** Why a challenge was not spent, from its row as it is stored now (if at all). */
async function refusal(challenge: string, purpose: ChallengePurpose): Promise<ChallengeError> {
  const row = await db().webAuthnChallenge.findUnique({ where: { challenge }, select: { purpose: true, usedAt: true } });
  if (!row || row.purpose !== purpose) return new ChallengeError("This passkey challenge is unknown. Try again.");
  if (row.usedAt !== null) return new ChallengeError("This passkey challenge was already used. Try again.");
  return new ChallengeError("This passkey challenge expired. Try again.");
}

function consumedOf(challenge: string, row: BoundTo): ConsumedChallenge {
  return {
    challenge,
    userId: row.userId,
    subject: row.subject,
    data: row.data === null ? null : JSON.parse(row.data),
    allow: row.allow === null ? null : (JSON.parse(row.allow) as string[]),
  };
}

/**
 * Spends a challenge, atomically: of two responses to one challenge exactly one gets it. Unknown, reused, expired or
 * other-purpose challenges are refused, when `consumed()` is asked. `reads` (SELECTs) run in the same transaction and
 * round trip (one simple query on PostgreSQL) whatever the spend's outcome, so a caller can judge what they found
 * before it judges the challenge, which is spent (if it could be) either way.
 */
export async function spendChallengeWith(
  challenge: string,
  purpose: ChallengePurpose,
  now: Date,
  reads: Query[],
): Promise<{ consumed: () => Promise<ConsumedChallenge>; rows: unknown[][] }> {
  const [spend, ...found] = await runTransaction(() => answersOf([reading(SPEND, now, challenge, purpose, now), ...reads], { last: true }));
  const [row] = spend.rows as BoundTo[];
  return {
    consumed: async () => {
      if (!row) throw await refusal(challenge, purpose);
      return consumedOf(challenge, row);
    },
    rows: found.map((answer) => answer.rows),
  };
}

/** Spends a challenge (spendChallengeWith), refusing one that was not spent. */
export async function consumeChallenge(
  challenge: string,
  purpose: ChallengePurpose,
  clock: Clock = systemClock,
): Promise<ConsumedChallenge> {
  return (await spendChallengeWith(challenge, purpose, clock(), [])).consumed();
}
