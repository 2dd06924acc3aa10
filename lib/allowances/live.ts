// Which allowances may pay a grant's payment: every payment looks for them first (a transfer the newest on its chain, an
// x402 payment one among all). They are read in one statement and remembered by the process, and each payment that
// pays from a remembered allowance requires in its own transaction that nothing changed since the read (no allowance
// made for the grant's credential, the chosen one still active), or it starts again from a fresh read. A remembered
// read only ever says yes: a payment it would refuse for the allowance's sake, or send to the person, is asked again
// of the database first (a policy's refusal, which no allowance changes, stands).
import { LRUCache } from "lru-cache";
import { required, type TransactionScript } from "@/lib/db/transaction-script";
import { readLiveAllowances, type Allowance } from "./allowances";

/** What a payment chose from a remembered read changed before its transaction: it starts again from a fresh read. */
export class AllowancesChanged extends Error {
  constructor() {
    super("the grant's allowances changed since they were read");
    this.name = "AllowancesChanged";
  }
}

/** The grant's live allowances for a credential, as a payment chooses among them. */
export type LiveAllowances = {
  /** newest first, each unexpired at the time asked */
  allowances: Allowance[];
  /** read earlier by this process, not for this payment */
  remembered: boolean;
  /** For the payment's transaction: what it chose (`chosenId`) still stands, or AllowancesChanged rolls it back. */
  unchanged: (chosenId: string) => TransactionScript<void>;
};

/** The grant's allowances for the credential as many as `made`, and `chosen` still active. */
const UNCHANGED = `SELECT 1 AS "unchanged" WHERE (SELECT COUNT(*) FROM "Allowance" WHERE "grantId" = ? AND "credentialId" = ?) = ?
  AND EXISTS (SELECT 1 FROM "Allowance" WHERE "id" = ? AND "status" = 'active')`;

const remembered = new LRUCache<string, { made: number; allowances: Allowance[] }>({ max: 2_000 });

/**
 * The grant's live allowances for `credentialId` at `now`: as this process last read them, unless `fresh` (or none
 * was read), when they are read now and remembered.
 */
export async function liveAllowances(grantId: string, credentialId: string, now: Date, { fresh = false } = {}): Promise<LiveAllowances> {
  const key = `${grantId}:${credentialId}`;
  const known = fresh ? undefined : remembered.get(key);
  if (!known) {
    const read = await readLiveAllowances(grantId, credentialId, now);
    remembered.set(key, read);
    return { allowances: read.allowances, remembered: false, unchanged: function* () {} };
  }
  return {
    allowances: known.allowances.filter((allowance) => allowance.expiresAt > now),
    remembered: true,
    unchanged: (chosenId) =>
      required(
        () => {
          remembered.delete(key);
          return new AllowancesChanged();
        },
        UNCHANGED,
        grantId,
        credentialId,
        known.made,
        chosenId,
      ),
  };
}
