// Payments an agent sent itself from an allowance its own key spends (or a sub-agent from a slice of it), which no
// tool of this service saw: read from the DelegationManager's RedeemedDelegation events for the allowance's
// delegations, each decoded from its transaction's redeemDelegations call, and recorded once as a landed spend with
// its audit event, so that Clients, get_allowance and the audit log count them as they count the service's own.
import { decodeDelegations } from "@metamask/delegation-core";
import { DelegationManager } from "@metamask/delegation-abis";
import { decodeFunctionData, formatUnits, getAddress, hexToBigInt, slice, sliceHex, type Hex } from "viem";
import type { AllowanceSpend } from "@/lib/generated/prisma/client";
import { recordAuditIn, type AuditInput } from "@/lib/audit";
import { sha256Hex } from "@/lib/crypto";
import { db } from "@/lib/db";
import { ChainError, ChainUnansweredError, onChain } from "@/lib/wallet/chains";
import type { Allowance } from "./allowances";
import { frameworkFor } from "./allowances";
import { delegationHash } from "./delegation-encoding";
import { paymentOf } from "./spend";
import { relayerNamed } from "./relay";

/** The most blocks one read asks the node for; a provider that caps eth_getLogs' range lower is asked for less. */
const BLOCKS_PER_READ = 5_000n;

/**
 * How many blocks must stand on a block before it is read (decision 0043): a reorg that deep or shallower replaces
 * only blocks not read yet, so nothing recorded came from a block the chain dropped, and the cursor never passes one.
 */
export const CONFIRMATIONS = 5n;

/** Per chain, the range its provider last took when it refused a wider one: asked from then on, not 5,000 each time. */
const readableSpan = new Map<number, bigint>();

const REDEEMED = DelegationManager.find((item) => item.type === "event" && item.name === "RedeemedDelegation")!;

/** What the redeemDelegations call of `input` ran under `rootHash`: the execution whose chain ends at it. */
function executionUnder(input: Hex, rootHash: string) {
  let call;
  try {
    call = decodeFunctionData({ abi: DelegationManager, data: input });
  } catch {
    return null; // sent through another contract: its call cannot be read here
  }
  if (call.functionName !== "redeemDelegations") return null;
  const [contexts, , executions] = call.args as readonly [readonly Hex[], readonly Hex[], readonly Hex[]];
  const index = contexts.findIndex((context) => {
    const chain = decodeDelegations(context);
    const root = chain.at(-1);
    return root !== undefined && delegationHash(root).toLowerCase() === rootHash.toLowerCase();
  });
  const execution = executions[index];
  if (index < 0 || !execution || execution.length < 2 + 2 * 52) return null;
  return paymentOf({
    to: getAddress(slice(execution, 0, 20)),
    value: hexToBigInt(sliceHex(execution, 20, 52)),
    // not viem's slice, which refuses to start at the end: a payment of the coin carries no call data
    data: `0x${execution.slice(2 + 2 * 52)}`,
  });
}

/**
 * The RedeemedDelegation events of the allowance's person from `from` on, up to `head` or as far as the node gives in
 * one read, and the last block they cover. A node that refuses the range (a provider's cap, answered as a JSON-RPC
 * error) is asked for half as many blocks, down to one; one that does not answer (429, 5xx, a timeout) fails the read.
 */
async function redeemedFrom(allowance: Allowance, from: bigint, head: bigint) {
  const framework = frameworkFor(allowance.chainId);
  for (let span = readableSpan.get(allowance.chainId) ?? BLOCKS_PER_READ; ;) {
    const to = from + span - 1n < head ? from + span - 1n : head;
    try {
      const logs = await onChain(allowance.chainId, (client) =>
        client.getLogs({
          address: framework.DelegationManager,
          event: REDEEMED,
          args: { rootDelegator: getAddress(allowance.delegator) },
          fromBlock: from,
          toBlock: to,
        }),
      );
      if (span < BLOCKS_PER_READ) readableSpan.set(allowance.chainId, span);
      return { logs, to };
    } catch (error) {
      if (!(error instanceof ChainError) || error instanceof ChainUnansweredError || to === from) throw error;
      span = (to - from + 1n) / 2n;
    }
  }
}

/**
 * Records the payments the agent sent itself since the allowance's cursor, up to CONFIRMATIONS blocks behind the
 * chain's latest, and moves the cursor past each range read once its payments are recorded. Each is one spend,
 * whichever view reads it first: its id is derived from its transaction and delegation, so a second reader's insert
 * finds it taken and records nothing. Returns the spends recorded now.
 */
export async function recordOwnPayments(allowance: Allowance): Promise<AllowanceSpend[]> {
  if (allowance.delegateKind !== "agent" || allowance.ownPaymentsFrom === null) return [];
  const roots = new Set(allowance.delegations.map((row) => row.hash.toLowerCase()));
  // uncached: a block number kept for a few seconds would leave a payment just confirmed for a later read
  const latest = await onChain(allowance.chainId, (client) => client.getBlockNumber({ cacheTime: 0 }));
  const head = latest - CONFIRMATIONS;
  const from = BigInt(allowance.ownPaymentsFrom);
  if (from > head) return [];
  const { logs, to } = await redeemedFrom(allowance, from, head);
  const recorded: AllowanceSpend[] = [];
  for (const log of logs) {
    const redeemed = log.args.delegation as Parameters<typeof delegationHash>[0] | undefined;
    if (!redeemed || !log.transactionHash) continue;
    const hash = delegationHash(redeemed).toLowerCase();
    if (!roots.has(hash)) continue;
    const stored = allowance.delegations.find((row) => row.hash.toLowerCase() === hash)!;
    const txHash = log.transactionHash;
    // a payment this service relayed is recorded already, under its own id
    if (await db().allowanceSpend.count({ where: { allowanceId: allowance.id, txHash, delegationHash: stored.hash } })) continue;
    const transaction = await onChain(allowance.chainId, (client) => client.getTransaction({ hash: txHash }));
    // sent by one of the service's relayers (the agent's signed leaf, relayed): recorded by its sender, whichever of its
    // nonce's transactions landed
    if (relayerNamed(allowance.chainId, transaction.from)) continue;
    const moved = executionUnder(transaction.input, stored.hash);
    if (!moved) continue;
    const spend = {
      id: `as_${sha256Hex(`${txHash}:${stored.hash}`).slice(0, 32)}`,
      allowanceId: allowance.id,
      delegationHash: stored.hash,
      recipient: moved.recipient,
      token: moved.token,
      amount: moved.amount.toString(),
      status: "landed",
      txHash,
    };
    const event: AuditInput = {
      type: "allowance.spent",
      userId: allowance.userId,
      clientId: null,
      credentialId: allowance.credentialId,
      data: {
        allowanceId: allowance.id,
        txHash,
        outcome: "landed",
        by: getAddress(transaction.from),
        recipient: moved.recipient,
        amount: moved.token ? `${moved.amount} of token ${moved.token}` : `${formatUnits(moved.amount, 18)} of the chain's coin`,
      },
    };
    try {
      recorded.push(
        await db().$transaction(async (tx) => {
          const created = await tx.allowanceSpend.create({ data: spend });
          await recordAuditIn(tx, [event]);
          return created;
        }),
      );
    } catch (error) {
      // another reader recorded it first
      if (!(await db().allowanceSpend.count({ where: { id: spend.id } }))) throw error;
    }
  }
  const advanced = await db().allowance.updateMany({
    where: { id: allowance.id, ownPaymentsFrom: allowance.ownPaymentsFrom },
    data: { ownPaymentsFrom: Number(to + 1n) },
  });
  // the rest up to the head, unless another reader moved the cursor first (and reads it)
  if (!advanced.count || to === head) return recorded;
  return [...recorded, ...(await recordOwnPayments({ ...allowance, ownPaymentsFrom: Number(to + 1n) }))];
}

/**
 * Reads the payments agents sent themselves for every allowance their own keys spend, not revoked and not long ended, so that
 * the audit log and the person's notifications have them as the chain does, not only when a view next reads them
 * (reconcile.ts runs it). One allowance at a time; one whose node does not answer is read next run.
 */
export async function recordAllOwnPayments(failed: (error: unknown) => void): Promise<void> {
  const allowances = await db().allowance.findMany({
    // an hour past its end: long enough for the chain's last payments of it to stand under CONFIRMATIONS blocks
    where: {
      delegateKind: "agent",
      status: { not: "revoked" },
      ownPaymentsFrom: { not: null },
      expiresAt: { gt: new Date(Date.now() - 3_600_000) },
    },
    include: { delegations: true },
  });
  for (const allowance of allowances) await recordOwnPayments(allowance).catch(failed);
}
