// The single use of a DPoP proof (RFC 9449 §11.1): its jti is recorded in the database, which every instance shares,
// by one INSERT that of any number of concurrent uses lets exactly one through.
import { queryPastOrm } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto";
import { DPOP_PROOF_MAX_AGE_SECONDS, type CheckedProof } from "./dpop-proof";
import { InvalidDpopProofError } from "./errors";

const RECORD = `INSERT INTO "DpopProof" ("jtiHash", "expiresAt") VALUES (?, ?) ON CONFLICT ("jtiHash") DO NOTHING RETURNING "jtiHash"`;

/**
 * Spends a checked proof's jti, or refuses a proof used before. The row is kept until no proof with that iat could
 * pass the window any more (then lib/db/sweep.ts deletes it). Keyed by the key's thumbprint with the jti, so two
 * keys that happen to pick one jti do not collide.
 */
export async function spendDpopProof(proof: CheckedProof, status: 400 | 401 = 400): Promise<void> {
  const expiresAt = new Date((proof.iat + DPOP_PROOF_MAX_AGE_SECONDS + 1) * 1000);
  const recorded = await queryPastOrm(RECORD, [sha256Hex(`${proof.jkt}:${proof.jti}`), expiresAt]);
  if (recorded.length === 0) throw new InvalidDpopProofError("The DPoP proof was already used: make a new one for each request", status);
}
