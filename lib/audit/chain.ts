// The hash chain's shape: what each audit row covers and how its hash follows from the one before.
import { createHash } from "node:crypto";
import { canonicalJson } from "@/lib/crypto";

export const GENESIS_HASH = "0".repeat(64);

/** A verified point of the chain: the event `seq` has hash `hash` (seq 0 is the genesis). */
export type ChainPoint = { seq: number; hash: string };

/** An audit row as stored, before its own hash is computed. */
export type StoredEvent = {
  seq: number;
  at: Date;
  type: string;
  userId: string | null;
  clientId: string | null;
  credentialId: string | null;
  requestId: string | null;
  data: string;
  prevHash: string;
};

/** hash = SHA-256(prevHash ‖ canonical encoding of the event's fields). */
export function eventHash(event: StoredEvent): string {
  const body = canonicalJson({
    seq: event.seq,
    at: event.at.toISOString(),
    type: event.type,
    userId: event.userId,
    clientId: event.clientId,
    credentialId: event.credentialId,
    requestId: event.requestId,
    data: event.data,
  });
  return createHash("sha256").update(event.prevHash).update("\n").update(body).digest("hex");
}
