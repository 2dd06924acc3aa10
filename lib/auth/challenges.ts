import { db, directWriter } from "@/lib/db";
import { randomId, randomSecret } from "@/lib/crypto";
import { addSeconds, systemClock, type Clock } from "@/lib/clock";
import { changesOf, postgresStatement, rowsOf, runTransaction, type Parameter, type TransactionScript } from "@/lib/db/transaction-script";
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

const SPEND = `UPDATE "WebAuthnChallenge" SET "usedAt" = ?
  WHERE "challenge" = ? AND "purpose" = ? AND "usedAt" IS NULL AND "expiresAt" > ?`;
const STORED = `SELECT "purpose", "userId", "subject", "data", "allow", "usedAt" FROM "WebAuthnChallenge" WHERE "challenge" = ?`;

type StoredChallenge = {
  purpose: string;
  userId: string | null;
  subject: string | null;
  data: string | null;
  allow: string | null;
  usedAt: unknown;
};

/**
 * Spends a challenge, atomically: of two responses to one challenge exactly one
 * gets it. Unknown, reused, expired or other-purpose challenges are refused.
 */
function* spentChallenge(challenge: string, purpose: ChallengePurpose, now: Date): TransactionScript<ConsumedChallenge> {
  const spent = yield* changesOf(SPEND, now, challenge, purpose, now);
  const [row] = yield* rowsOf<StoredChallenge>(STORED, challenge);
  if (spent === 0) throw refusal(row, purpose);
  return consumedOf(challenge, row);
}

/** Why a challenge was not spent, from its row as it is stored (if at all). */
function refusal(row: StoredChallenge | undefined, purpose: ChallengePurpose): ChallengeError {
  if (!row || row.purpose !== purpose) return new ChallengeError("This passkey challenge is unknown. Try again.");
  if (row.usedAt !== null) return new ChallengeError("This passkey challenge was already used. Try again.");
  return new ChallengeError("This passkey challenge expired. Try again.");
}

function consumedOf(challenge: string, row: Pick<StoredChallenge, "userId" | "subject" | "data" | "allow">): ConsumedChallenge {
  return {
    challenge,
    userId: row.userId,
    subject: row.subject,
    data: row.data === null ? null : JSON.parse(row.data),
    allow: row.allow === null ? null : (JSON.parse(row.allow) as string[]),
  };
}

type SpentRow = {
  challengeUserId: string | null;
  challengeSubject: string | null;
  challengeData: string | null;
  challengeAllow: string | null;
};

/**
 * spentChallenge, and one row that `read` (a SELECT with `?` placeholders for `params`) finds, or undefined. On
 * PostgreSQL one statement, atomic on its own like the UPDATE it holds (of two at once exactly one spends the
 * challenge), where a transaction took five round trips; on SQLite the script, synchronous there.
 */
export async function spentChallengeAnd<Row extends object>(
  challenge: string,
  purpose: ChallengePurpose,
  now: Date,
  read: string,
  ...params: Parameter[]
): Promise<{ consumed: ConsumedChallenge; row: Row | undefined }> {
  const writer = directWriter();
  if (writer.kind === "sqlite") {
    return runTransaction(function* () {
      const consumed = yield* spentChallenge(challenge, purpose, now);
      const [row] = yield* rowsOf<Row>(read, ...params);
      return { consumed, row };
    });
  }
  const [spent] = await postgresStatement<SpentRow & { readFound: boolean | null }>(
    writer.scripts,
    `WITH spent AS (${SPEND}
       RETURNING "userId" AS "challengeUserId", "subject" AS "challengeSubject", "data" AS "challengeData", "allow" AS "challengeAllow")
     SELECT * FROM spent LEFT JOIN (SELECT true AS "readFound", found.* FROM (${read}) AS found) AS found ON true`,
    [now, challenge, purpose, now, ...params],
  );
  if (!spent) throw refusal((await postgresStatement<StoredChallenge>(writer.scripts, STORED, [challenge]))[0], purpose);
  const { challengeUserId, challengeSubject, challengeData, challengeAllow, readFound, ...row } = spent;
  return {
    consumed: consumedOf(challenge, { userId: challengeUserId, subject: challengeSubject, data: challengeData, allow: challengeAllow }),
    row: readFound ? (row as unknown as Row) : undefined,
  };
}

/** spentChallenge in a transaction of its own. */
export function consumeChallenge(challenge: string, purpose: ChallengePurpose, clock: Clock = systemClock): Promise<ConsumedChallenge> {
  const now = clock();
  return runTransaction(() => spentChallenge(challenge, purpose, now));
}
