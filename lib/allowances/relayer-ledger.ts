// What the relayers paid, and for whom: every transaction a relayer sends is recorded before it leaves (with its gas
// limit, which counts until the receipt says what it used), so a person's relays of the last 24 hours can be held to
// ALLOWANCE_GAS_BUDGET on every instance, and the operator can read what each person cost.
import type { Address, Hex, TransactionReceipt } from "viem";
import { db, queryPastOrm, selectRows } from "@/lib/db";
import { PreparedSelect } from "@/lib/db/prepared";
import { rowsLater, writing, type Query, type TransactionScript } from "@/lib/db/transaction-script";

export type RelayPurpose = "authorization" | "payment" | "revocation";

/** Whom a relayed transaction serves: a person's allowance, or nobody's in particular. */
export type RelayFor = { purpose: RelayPurpose; userId: string | null; allowanceId: string | null };

export const BUDGET_WINDOW_MS = 24 * 3_600_000;

// Past the ORM (lib/db/transaction-script.ts), as the reads below: every payment records its transaction and its
// receipt, each in one transaction with what its caller records of them.
const RECORD_RELAYED = `INSERT INTO "RelayedTransaction"
  ("hash", "chainId", "relayer", "userId", "allowanceId", "purpose", "gasLimit", "nonce", "raw", "status", "createdAt")
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'sent', ?)`;
const RECORD_RECEIPT = `UPDATE "RelayedTransaction" SET "gasUsed" = ?, "feePaid" = ?, "status" = ? WHERE "hash" = ?`;
const RECORD_DROPPED = `UPDATE "RelayedTransaction" SET "gasUsed" = 0, "feePaid" = '0', "status" = 'dropped'
  WHERE "hash" = ? AND "status" = 'sent'`;

/** A transaction about to be sent: its hash, nonce and signed bytes (kept to broadcast again), and its gas limit. */
export type SignedRelay = { hash: Hex; chainId: number; relayer: Address; nonce: number; raw: Hex; gasLimit: bigint; for: RelayFor };

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
    new Date(),
  );
}

/** A transaction whose nonce another took, none of it mined: it will never land, and cost nothing. */
export function droppedRow(hash: Hex): Query {
  return writing(RECORD_DROPPED, hash);
}

const RELAYED_BYTES = new PreparedSelect<{ relayer: string; nonce: number | null; raw: Hex | null; status: string }>(
  "relayed_bytes",
  `SELECT "relayer", "nonce", "raw", "status" FROM "RelayedTransaction" WHERE "hash" = ?`,
);

/** A relayed transaction's signed bytes and nonce as stored before its send (none on rows from before they were kept). */
export async function relayedBytes(hash: Hex) {
  return (await selectRows(RELAYED_BYTES, hash))[0];
}

/** What a mined transaction used and paid, as its ledger row's update; a receipt seen twice records the same. */
export function receiptRow(receipt: Pick<TransactionReceipt, "transactionHash" | "status" | "gasUsed" | "effectiveGasPrice">): Query {
  return writing(
    RECORD_RECEIPT,
    Number(receipt.gasUsed),
    (receipt.gasUsed * receipt.effectiveGasPrice).toString(),
    receipt.status === "success" ? "landed" : "reverted",
    receipt.transactionHash,
  );
}

/**
 * Past the ORM (lib/db queryPastOrm): it runs on every payment, and through Prisma it cost several times the statement.
 * Revocations have a budget of their own (ALLOWANCE_REVOCATION_GAS_BUDGET): payments cannot use up what a person needs
 * to stop them, and revocations cannot be sent without end.
 */
const gasSpentSql = (revocations: boolean) => `SELECT COALESCE(SUM(COALESCE("gasUsed", "gasLimit")), 0) AS "gas",
  MIN("createdAt") AS "oldest" FROM "RelayedTransaction"
  WHERE "userId" = ? AND "chainId" = ? AND "createdAt" > ? AND "purpose" ${revocations ? "=" : "<>"} 'revocation'`;
const GAS_SPENT = gasSpentSql(false);
const REVOCATION_GAS_SPENT = gasSpentSql(true);

/** Gas a relayer spent for a person in the window, and when the oldest of it leaves the window. */
export type GasSpent = { gas: bigint; oldest: Date | null };
type GasSpentRow = { gas: number | string; oldest: Date | string | null };

// SQLite gives the sum as a number and the time as the text stored; PostgreSQL a numeric string and a Date.
const gasSpentOf = (row: GasSpentRow | undefined): GasSpent => ({
  gas: BigInt(row?.gas ?? 0),
  oldest: row?.oldest ? new Date(row.oldest) : null,
});

const windowStart = () => new Date(Date.now() - BUDGET_WINDOW_MS);

/**
 * Gas the relayer of `chainId` spent for the person in the budget's window (a transaction not mined yet counts its
 * limit), and when the oldest of it leaves the window: on their revocations, or on all the rest.
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
