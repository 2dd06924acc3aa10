// What the relayers paid, and for whom: every transaction a relayer sends is recorded before it leaves (with its gas
// limit, which counts until the receipt says what it used), so a person's relays of the last 24 hours can be held to
// ALLOWANCE_GAS_BUDGET on every instance, and the operator can read what each person cost.
import type { Address, Hex, TransactionReceipt } from "viem";
import { db, queryPastOrm, selectRows } from "@/lib/db";
import { PreparedSelect } from "@/lib/db/prepared";
import { requiring, rowsLater, writing, type Query, type TransactionScript } from "@/lib/db/transaction-script";

/**
 * What a relayed transaction is for; "unblock": a no-op that takes a nonce another sender's transaction held
 * (./unblock.ts); "approval": an agent account's approval of Permit2 and the gas the relayer sent it for it
 * (./agent-account-permit2.ts), the approval's row with the account as its sender; "sweep": what a stopped allowance's
 * agent account holds, sent back to the person (./agent-account.ts).
 */
export type RelayPurpose = "authorization" | "payment" | "revocation" | "unblock" | "approval" | "sweep";

/** Whom a relayed transaction serves: a person's allowance, or nobody's in particular. */
export type RelayFor = { purpose: RelayPurpose; userId: string | null; allowanceId: string | null };

export const BUDGET_WINDOW_MS = 24 * 3_600_000;

// Past the ORM (lib/db/transaction-script.ts), as the reads below: every payment records its transaction and its
// receipt, each in one transaction with what its caller records of them.
const RECORD_RELAYED = `INSERT INTO "RelayedTransaction"
  ("hash", "chainId", "relayer", "userId", "allowanceId", "purpose", "gasLimit", "nonce", "raw", "lineage", "cost", "l1Fee",
   "status", "createdAt")
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'sent', ?)`;
const RECORD_RECEIPT = `UPDATE "RelayedTransaction" SET "gasUsed" = ?, "feePaid" = ?, "cost" = ?, "status" = ? WHERE "hash" = ?`;
const RECORD_DROPPED = `UPDATE "RelayedTransaction" SET "gasUsed" = 0, "feePaid" = '0', "cost" = 0, "status" = 'dropped'
  WHERE "hash" = ? AND "status" = 'sent'`;
/** The rest of a mined transaction's lineage will never land: replaced, at no cost. */
const LINEAGE_REPLACED = `UPDATE "RelayedTransaction" SET "gasUsed" = 0, "feePaid" = '0', "cost" = 0, "status" = 'replaced'
  WHERE "lineage" = ? AND "hash" <> ? AND "status" IN ('sent', 'replaced')`;
/** A transaction replaced by a higher-fee one of its nonce, as it is signed: it must still be waiting (else refused). */
const REPLACED = `UPDATE "RelayedTransaction" SET "gasUsed" = 0, "feePaid" = '0', "cost" = 0, "status" = 'replaced'
  WHERE "hash" = ? AND "status" = 'sent' RETURNING "hash"`;
/** A replacement the node refused: the one it was to replace waits again. */
const UNREPLACED = `UPDATE "RelayedTransaction" SET "cost" = ?, "status" = 'sent' WHERE "hash" = ? AND "status" = 'replaced'`;
/**
 * What names a relayer's transaction — a request's, a spend's, a revocation's — follows its lineage to `hash` (the
 * replacement now waiting, or the one mined), from any other transaction of the lineage.
 */
const LINEAGE_HASHES = `SELECT "hash" FROM "RelayedTransaction" WHERE "lineage" = ?`;
const FOLLOWS = [
  `UPDATE "AgentRequest" SET "txHash" = ? WHERE "txHash" IN (${LINEAGE_HASHES}) AND "txHash" <> ?`,
  `UPDATE "AllowanceSpend" SET "txHash" = ? WHERE "txHash" IN (${LINEAGE_HASHES}) AND "txHash" <> ?`,
  `UPDATE "Allowance" SET "revocationTx" = ? WHERE "revocationTx" IN (${LINEAGE_HASHES}) AND "revocationTx" <> ?`,
];

/**
 * A transaction about to be sent: its hash, nonce and signed bytes (kept to broadcast again), its gas limit, the most
 * it may cost (its gas limit at its max fee, plus the L1 data fee) and that fee, and the first transaction of its
 * nonce when it replaces one (`lineage`).
 */
export type SignedRelay = {
  hash: Hex;
  chainId: number;
  relayer: Address;
  nonce: number;
  raw: Hex;
  gasLimit: bigint;
  cost: bigint;
  l1Fee: bigint | null;
  lineage?: Hex;
  for: RelayFor;
};

/** The ledger's row of a transaction about to be sent. */
export function relayedRow(sent: SignedRelay): Query {
  const { userId, allowanceId, purpose } = sent.for;
  const gasLimit = Number(sent.gasLimit);
  return writing(
    RECORD_RELAYED,
    sent.hash,
    sent.chainId,
    sent.relayer,
    userId,
    allowanceId,
    purpose,
    gasLimit,
    sent.nonce,
    sent.raw,
    sent.lineage ?? sent.hash,
    sent.cost.toString(),
    sent.l1Fee?.toString() ?? null,
    new Date(),
  );
}

/** A transaction whose nonce another took, none of it mined: it will never land, and cost nothing. */
export function droppedRow(hash: Hex): Query {
  return writing(RECORD_DROPPED, hash);
}

/** Whatever names a transaction of `lineage` names `hash` from now on. */
const followingRows = (lineage: Hex, hash: Hex): Query[] => FOLLOWS.map((sql) => writing(sql, hash, lineage, hash));

/**
 * `replacement` takes the place of the waiting `replaced`, in one transaction: its row, the other's marked replaced
 * (refused with `gone()` when it is no longer waiting: mined, dropped, or replaced by another), and what named it.
 */
export function replacementRows(replacement: SignedRelay & { lineage: Hex }, replaced: Hex, gone: () => Error): Query[] {
  return [relayedRow(replacement), requiring(gone, REPLACED, replaced), ...followingRows(replacement.lineage, replacement.hash)];
}

/** The node refused `replacement`: it never was, and the transaction it was to replace (costing `cost`) waits again. */
export function refusedReplacementRows(replacement: Hex, replaced: Hex, lineage: Hex, cost: bigint): Query[] {
  return [droppedRow(replacement), writing(UNREPLACED, cost.toString(), replaced), ...followingRows(lineage, replaced)];
}

export type RelayedRow = {
  hash: Hex;
  chainId: number;
  relayer: Address;
  userId: string | null;
  allowanceId: string | null;
  purpose: RelayPurpose;
  nonce: number | null;
  raw: Hex | null;
  status: string;
  lineage: Hex | null;
  gasLimit: number;
  cost: string | number | null;
  l1Fee: string | null;
};

const RELAYED = new PreparedSelect<RelayedRow>(
  "relayed_row",
  `SELECT "hash", "chainId", "relayer", "userId", "allowanceId", "purpose", "nonce", "raw", "status", "lineage", "gasLimit",
    CAST("cost" AS TEXT) AS "cost", "l1Fee" FROM "RelayedTransaction" WHERE "hash" = ?`,
);

/** A relayed transaction's row: its signed bytes and nonce as stored before its send (none on rows from before they were kept). */
export async function relayedBytes(hash: Hex): Promise<RelayedRow | undefined> {
  return (await selectRows(RELAYED, hash))[0];
}

const LINEAGE = new PreparedSelect<{ hash: Hex; status: string; l1Fee: string | null }>(
  "relayed_lineage",
  `SELECT "hash", "status", "l1Fee" FROM "RelayedTransaction" WHERE "lineage" = ? ORDER BY "createdAt"`,
);

/** Every transaction of `lineage` (the first of a nonce and its replacements), the first first. */
export async function lineageOf(lineage: Hex) {
  return selectRows(LINEAGE, lineage);
}

const REFUSED_IN = new PreparedSelect<{ raw: Hex }>(
  "relayed_refused",
  `SELECT "raw" FROM "RelayedTransaction" WHERE "lineage" = ? AND "status" = 'dropped' AND "raw" IS NOT NULL`,
);

/** The signed bytes of `lineage`'s transactions the node refused (replacements it did not take): what it holds offers more. */
export async function refusedIn(lineage: Hex): Promise<Hex[]> {
  return (await selectRows(REFUSED_IN, lineage)).map((row) => row.raw);
}

/** A receipt as the ledger records it: an OP-stack chain's carries its L1 data fee (`l1Fee`, hex), others none. */
export type LedgerReceipt = Pick<TransactionReceipt, "transactionHash" | "status" | "gasUsed" | "effectiveGasPrice"> & {
  l1Fee?: bigint | string | null;
};

/** What a mined transaction paid: its gas at the price paid, and the L1 data fee (the receipt's, else `estimatedL1Fee`). */
export function feePaidOf(receipt: LedgerReceipt, estimatedL1Fee: bigint | null = null): bigint {
  const l1Fee = receipt.l1Fee !== undefined && receipt.l1Fee !== null ? BigInt(receipt.l1Fee) : (estimatedL1Fee ?? 0n);
  return receipt.gasUsed * receipt.effectiveGasPrice + l1Fee;
}

/**
 * What a mined transaction used and paid, as its ledger row's update; a receipt seen twice records the same. With
 * `lineage` (one of its nonce was replaced), the rest of the lineage is marked replaced, and what named any of it
 * names the mined one.
 */
export function receiptRows(receipt: LedgerReceipt, options: { estimatedL1Fee?: bigint | null; lineage?: Hex | null } = {}): Query[] {
  const paid = feePaidOf(receipt, options.estimatedL1Fee).toString();
  const hash = receipt.transactionHash;
  const recorded = writing(RECORD_RECEIPT, Number(receipt.gasUsed), paid, paid, receipt.status === "success" ? "landed" : "reverted", hash);
  if (!options.lineage) return [recorded];
  return [recorded, writing(LINEAGE_REPLACED, options.lineage, hash), ...followingRows(options.lineage, hash)];
}

/**
 * Past the ORM (lib/db queryPastOrm): it runs on every payment, and through Prisma it cost several times the statement.
 * Revocations have a budget of their own (ALLOWANCE_REVOCATION_GAS_BUDGET): payments cannot use up what a person needs
 * to stop them, and revocations cannot be sent without end.
 */
const gasSpentSql = (revocations: boolean) => `SELECT COALESCE(SUM(COALESCE("gasUsed", "gasLimit")), 0) AS "gas",
  CAST(COALESCE(SUM("cost"), 0) AS TEXT) AS "coin", MIN("createdAt") AS "oldest" FROM "RelayedTransaction"
  WHERE "userId" = ? AND "chainId" = ? AND "createdAt" > ? AND "purpose" ${revocations ? "=" : "<>"} 'revocation'`;
const GAS_SPENT = gasSpentSql(false);
const REVOCATION_GAS_SPENT = gasSpentSql(true);

/**
 * Gas a relayer spent for a person in the window, the coin it paid or may pay for them (wei, L1 data fees included),
 * and when the oldest of it leaves the window.
 */
export type GasSpent = { gas: bigint; coin: bigint; oldest: Date | null };
type GasSpentRow = { gas: number | string; coin: string; oldest: Date | string | null };

// SQLite gives the sum as a number and the time as the text stored; PostgreSQL a numeric string and a Date. The coin
// is summed as integers and read as text: wei overflow a double.
const gasSpentOf = (row: GasSpentRow | undefined): GasSpent => ({
  gas: BigInt(row?.gas ?? 0),
  coin: BigInt(row?.coin ?? 0),
  oldest: row?.oldest ? new Date(row.oldest) : null,
});

const windowStart = () => new Date(Date.now() - BUDGET_WINDOW_MS);

/**
 * Gas and coin the relayer of `chainId` spent for the person in the budget's window (a transaction not mined yet counts
 * its limit, at its max fee), and when the oldest of it leaves the window: on their revocations, or on all the rest.
 */
export async function gasSpentFor(userId: string, chainId: number, on: "revocations" | "payments" = "payments"): Promise<GasSpent> {
  const sql = on === "revocations" ? REVOCATION_GAS_SPENT : GAS_SPENT;
  return gasSpentOf((await queryPastOrm<GasSpentRow>(sql, [userId, chainId, windowStart()]))[0]);
}

/** gasSpentFor in the caller's transaction, without waiting for the answer: it is there once the transaction has run. */
export function* gasSpentIn(userId: string, chainId: number): TransactionScript<() => GasSpent> {
  const rows = yield* rowsLater<GasSpentRow>(GAS_SPENT, userId, chainId, windowStart());
  return () => gasSpentOf(rows()[0]);
}

export type PersonSpending = {
  userId: string | null;
  chainId: number;
  transactions: number;
  reverted: number;
  gas: bigint;
  /** wei paid in fees by the mined ones */
  fees: bigint;
};

/** Per person and chain, what the relayers sent since `since`: the operator's report (npm run relayer:spending). */
export async function relayerSpending(since: Date): Promise<PersonSpending[]> {
  const rows = await db().relayedTransaction.findMany({ where: { createdAt: { gt: since } } });
  const totals = new Map<string, PersonSpending>();
  for (const row of rows) {
    const key = `${row.userId ?? ""}|${row.chainId}`;
    const total = totals.get(key) ?? { userId: row.userId, chainId: row.chainId, transactions: 0, reverted: 0, gas: 0n, fees: 0n };
    total.transactions += 1;
    if (row.status === "reverted") total.reverted += 1;
    total.gas += BigInt(row.gasUsed ?? row.gasLimit);
    total.fees += BigInt(row.feePaid ?? 0);
    totals.set(key, total);
  }
  return [...totals.values()].sort((a, b) => (a.fees === b.fees ? Number(b.gas - a.gas) : a.fees < b.fees ? 1 : -1));
}

/** The relayer's highest nonce still waiting in the ledger: the next transaction takes a later one, whatever the node's pool says. */
const LAST_WAITING_NONCE = `SELECT MAX("nonce") AS "nonce" FROM "RelayedTransaction"
  WHERE "status" = 'sent' AND "chainId" = ? AND "relayer" = ?`;

type WaitingNonce = { nonce: number | string | null };
const nonceAfter = (rows: WaitingNonce[]) => {
  const last = rows[0]?.nonce;
  return last === null || last === undefined ? null : Number(last) + 1;
};

/** In the caller's transaction: the nonce after the relayer's last one still waiting, or null when none waits. */
export function* nonceAfterWaitingIn(chainId: number, relayer: Address): TransactionScript<() => number | null> {
  const rows = yield* rowsLater<WaitingNonce>(LAST_WAITING_NONCE, chainId, relayer);
  return () => nonceAfter(rows());
}

/** nonceAfterWaitingIn, apart. */
export async function nonceAfterWaiting(chainId: number, relayer: Address): Promise<number | null> {
  return nonceAfter(await queryPastOrm<WaitingNonce>(LAST_WAITING_NONCE, [chainId, relayer]));
}

/** Each relayer with transactions waiting in the ledger, by chain: those whose nonce may be held (./unblock.ts). */
const RELAYERS_WAITING = `SELECT DISTINCT "chainId", "relayer" FROM "RelayedTransaction" WHERE "status" = 'sent' AND "nonce" IS NOT NULL`;

export async function relayersWaiting(): Promise<{ chainId: number; relayer: Address }[]> {
  return queryPastOrm(RELAYERS_WAITING, []);
}

const LOWEST_WAITING_FROM = `SELECT MIN("nonce") AS "nonce" FROM "RelayedTransaction"
  WHERE "status" = 'sent' AND "chainId" = ? AND "relayer" = ? AND "nonce" >= ?`;

/** The relayer's lowest nonce from `nonce` on that the ledger has a transaction waiting at, or null when none waits there. */
export async function lowestWaitingFrom(chainId: number, relayer: Address, nonce: number): Promise<number | null> {
  const lowest = (await queryPastOrm<WaitingNonce>(LOWEST_WAITING_FROM, [chainId, relayer, nonce]))[0]?.nonce;
  return lowest === null || lowest === undefined ? null : Number(lowest);
}

const AT_NONCE = `SELECT "status", "purpose", "raw" FROM "RelayedTransaction"
  WHERE "chainId" = ? AND "relayer" = ? AND "nonce" = ? AND ("status" = 'sent' OR "purpose" = 'unblock')`;

/** The ledger's transactions at the relayer's `nonce` that wait there, and its no-ops there whatever became of them. */
export async function waitingOrNoOpsAt(chainId: number, relayer: Address, nonce: number) {
  return queryPastOrm<{ status: string; purpose: RelayPurpose; raw: Hex | null }>(AT_NONCE, [chainId, relayer, nonce]);
}
