// One receipt watcher per chain (issue 55): while anything waits for a receipt there, it follows the chain a block at a
// time, instead of every waiting transaction asking for its own receipt. About every 250 ms it asks the block number;
// each new block is read once for its transactions' hashes (eth_getBlockByNumber, hashes only), every block from the
// last one read (a block the node went past between two asks is read too), and receipts are asked only for the waited
// hashes found, in one exchange. Once per block (at least every 2 s when none comes, at most every second), each
// sender's mined nonce is asked once for all its waiters: a waiter whose nonce another transaction took hears so, and
// each waiter's own work runs (lib/allowances/relay.ts replaces a transaction fees left behind there). A waiter whose
// hashes were not seen in a few blocks asks their receipts directly, once (a block missed, a provider answering block
// reads from a lagging replica). A failed ask is asked again next tick: only a waiter's time limit ends its wait. With
// nothing waiting the watcher stops; its timers never hold the process open.
import {
  formatTransactionReceipt,
  numberToHex,
  WaitForTransactionReceiptTimeoutError,
  type Address,
  type Hex,
  type PublicClient,
  type RpcTransactionReceipt,
  type TransactionReceipt,
} from "viem";
import { onChain } from "@/lib/wallet/chains";

/** How often the block number is asked while anything waits. */
const POLL_MS = 250;
/** The waiters' work runs on a new block, but no more often than this (a chain of quarter-second blocks)… */
const WORK_MIN_MS = 1_000;
/** …and this often when no block comes (a chain that stalls, a node that mines only when it is sent something). */
const WORK_EVERY_MS = 2_000;
/** At most this many blocks are read per tick: a node far ahead is caught up over several. */
export const BLOCKS_PER_TICK = 32;
/** Further behind than this, the watcher reads only the last blocks and its waiters ask their receipts directly. */
export const MOST_BEHIND = 128;
/** On a start, the blocks before the head read too: a transaction mined between its send and the watcher's start. */
export const START_BACK = 2n;
/** A waiter whose hashes were not found in this many blocks read asks their receipts directly, once. */
const LATE_BLOCKS = 5;
/** The hashes of this many blocks last read: hashes waited for from now on (a replacement's) are looked for in them. */
const RECENT_BLOCKS = 16;

/**
 * The blocks to read after `seen` (the last read; null on a start) up to `head`, the range's ends included, or null
 * when there is no new block. Every block from seen + 1 on, at most BLOCKS_PER_TICK of them; a head below `seen` (a
 * reorg to a shorter chain) is read again; more than MOST_BEHIND behind, only the head's last blocks (`jumped`: what
 * was in those skipped is asked for directly).
 */
export function blocksToRead(seen: bigint | null, head: bigint): { from: bigint; to: bigint; jumped: boolean } | null {
  const atLeastZero = (block: bigint) => (block < 0n ? 0n : block);
  if (seen === null) return { from: atLeastZero(head - START_BACK), to: head, jumped: false };
  if (head === seen) return null;
  if (head < seen) return { from: head, to: head, jumped: false };
  if (head - seen > BigInt(MOST_BEHIND)) return { from: atLeastZero(head - BigInt(BLOCKS_PER_TICK) + 1n), to: head, jumped: true };
  const to = seen + BigInt(BLOCKS_PER_TICK);
  return { from: seen + 1n, to: head < to ? head : to, jumped: false };
}

/** Whether the waiters' work is due, `sinceMs` after it last ran: on a new block (not too often), or when none came for long. */
export function workDue(sinceMs: number, newBlock: boolean): boolean {
  return sinceMs >= WORK_EVERY_MS || (newBlock && sinceMs >= WORK_MIN_MS);
}

/** What a waiter waits for. */
export type Watch = {
  /** The hashes of which the first mined ends the wait: a transaction and its replacements. */
  hashes: Hex[];
  /** Its sender and nonce: once the sender's mined count passes it with none of `hashes` mined, the wait ends "taken". */
  sender?: { address: Address; nonce: number };
  /** Runs once per block while it waits (`block`: the head), one at a time: the hashes to wait for from then on. */
  everyBlock?: (block: bigint) => Promise<Hex[]>;
  /** The hashes now, asked before the wait ends "taken" (a replacement sent elsewhere is among them). */
  current?: () => Promise<Hex[]>;
  timeoutMs: number;
};

type Waiter = {
  watch: Watch;
  hashes: Hex[];
  /** blocks read since it began to wait */
  blocks: number;
  askedDirectly: boolean;
  /** its hashes are asked for directly on the next tick */
  askNow: boolean;
  working: boolean;
  done: boolean;
  finish: (outcome: TransactionReceipt | "taken" | Error) => void;
};

type ChainWatcher = {
  waiters: Set<Waiter>;
  /** the last block read, null until the first */
  seen: bigint | null;
  /** the hashes of the last blocks read, by number */
  recent: Map<bigint, Set<Hex>>;
  /** waited hashes found in a block whose receipt is still to be had */
  found: Set<Hex>;
  lastWork: number;
  timer: NodeJS.Timeout | null;
};

const watchers = new Map<number, ChainWatcher>();

/**
 * The receipt of the first of `watch.hashes` mined, or "taken" once its sender's nonce was mined in another
 * transaction; a WaitForTransactionReceiptTimeoutError after `watch.timeoutMs`. The caller asks for a receipt itself
 * right after the send: the watcher looks from its next tick on.
 */
export function receiptWatched(chainId: number, watch: Watch): Promise<TransactionReceipt | "taken"> {
  let watcher = watchers.get(chainId);
  if (!watcher) {
    watcher = { waiters: new Set(), seen: null, recent: new Map(), found: new Set(), lastWork: Date.now(), timer: null };
    watchers.set(chainId, watcher);
  }
  const chain = watcher;
  return new Promise((resolve, reject) => {
    const waiter: Waiter = {
      watch,
      hashes: [],
      blocks: 0,
      askedDirectly: false,
      askNow: false,
      working: false,
      done: false,
      finish: (outcome) => {
        if (waiter.done) return;
        waiter.done = true;
        clearTimeout(timeout);
        chain.waiters.delete(waiter);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      },
    };
    const timeout = setTimeout(
      () => waiter.finish(new WaitForTransactionReceiptTimeoutError({ hash: watch.hashes[0] })),
      watch.timeoutMs,
    ).unref();
    waitFor(chain, waiter, watch.hashes);
    chain.waiters.add(waiter);
    if (!chain.timer) schedule(chainId, chain);
  });
}

/** The waiter waits for `hashes` from now on: any of them in the blocks read lately is found already. */
function waitFor(watcher: ChainWatcher, waiter: Waiter, hashes: Hex[]) {
  waiter.hashes = hashes;
  for (const transactions of watcher.recent.values())
    for (const hash of hashes) if (transactions.has(hash.toLowerCase() as Hex)) watcher.found.add(hash);
}

function schedule(chainId: number, watcher: ChainWatcher) {
  watcher.timer = setTimeout(() => void tick(chainId, watcher), POLL_MS).unref();
}

/** Hands each waiter the receipt of its first hash that has one. */
function deliver(watcher: ChainWatcher, receipts: Map<Hex, TransactionReceipt>) {
  for (const hash of receipts.keys()) watcher.found.delete(hash);
  for (const waiter of watcher.waiters) {
    const mined = waiter.hashes.find((hash) => receipts.has(hash));
    if (mined) waiter.finish(receipts.get(mined)!);
  }
}

/** The receipts of `hashes` the node has, in one exchange. */
async function receiptsOf(client: PublicClient, hashes: Iterable<Hex>): Promise<Map<Hex, TransactionReceipt>> {
  const asked = [...new Set(hashes)];
  const answers = await Promise.all(
    asked.map((hash) => client.request({ method: "eth_getTransactionReceipt", params: [hash] }) as Promise<RpcTransactionReceipt | null>),
  );
  const receipts = new Map<Hex, TransactionReceipt>();
  answers.forEach((answer, index) => answer && receipts.set(asked[index], formatTransactionReceipt(answer)));
  return receipts;
}

/** Reads the new blocks: the waited hashes in them are found. True when there was a new block. */
async function readBlocks(client: PublicClient, watcher: ChainWatcher, head: bigint): Promise<boolean> {
  const range = blocksToRead(watcher.seen, head);
  if (!range) return false;
  const numbers: bigint[] = [];
  for (let block = range.from; block <= range.to; block++) numbers.push(block);
  const blocks = await Promise.all(
    numbers.map(
      (block) =>
        client.request({ method: "eth_getBlockByNumber", params: [numberToHex(block), false] }) as Promise<{ transactions: Hex[] } | null>,
    ),
  );
  let read = false;
  // the blocks before the head read on a start are not counted as waited
  const starting = watcher.seen === null;
  for (const [index, block] of blocks.entries()) {
    // a replica that does not have it yet: read again on the next tick
    if (!block) break;
    read = true;
    const number = numbers[index];
    const transactions = new Set(block.transactions.map((hash) => hash.toLowerCase() as Hex));
    watcher.recent.set(number, transactions);
    for (const waiter of watcher.waiters) {
      if (!starting) waiter.blocks++;
      for (const hash of waiter.hashes) if (transactions.has(hash.toLowerCase() as Hex)) watcher.found.add(hash);
    }
    watcher.seen = number;
  }
  for (const number of watcher.recent.keys()) if (watcher.recent.size > RECENT_BLOCKS) watcher.recent.delete(number);
  if (range.jumped) for (const waiter of watcher.waiters) waiter.askNow = true;
  return read;
}

/**
 * Once per block: the mined count of each sender waited on, once; a waiter past whose nonce it went hears "taken"
 * unless its receipt is there now (asked after the count: had its transaction taken the nonce, it would be). Then each
 * waiter's own work, while none of it runs.
 */
async function work(client: PublicClient, watcher: ChainWatcher, head: bigint) {
  const waiting = [...watcher.waiters];
  const senders = [...new Set(waiting.flatMap((waiter) => (waiter.watch.sender ? [waiter.watch.sender.address] : [])))];
  const counts = await Promise.all(senders.map((address) => client.getTransactionCount({ address, blockTag: "latest" })));
  const minedCount = new Map(senders.map((address, index) => [address, counts[index]]));
  // one whose work runs may have just sent a replacement that is not among its hashes yet: judged on the next block
  const passed = waiting.filter(
    (waiter) => waiter.watch.sender && !waiter.working && minedCount.get(waiter.watch.sender.address)! > waiter.watch.sender.nonce,
  );
  if (passed.length) {
    for (const waiter of passed) {
      const { current } = waiter.watch;
      if (current) waitFor(watcher, waiter, await current().catch(() => waiter.hashes));
    }
    deliver(watcher, await receiptsOf(client, [...watcher.found, ...passed.flatMap((waiter) => waiter.hashes)]));
    for (const waiter of passed) waiter.finish("taken");
  }
  for (const waiter of watcher.waiters) {
    const { everyBlock } = waiter.watch;
    if (!everyBlock || waiter.working) continue;
    waiter.working = true;
    void everyBlock(head)
      .then(
        (hashes) => waitFor(watcher, waiter, hashes),
        () => {},
      )
      .finally(() => (waiter.working = false));
  }
}

async function tick(chainId: number, watcher: ChainWatcher) {
  try {
    await onChain(chainId, async (client) => {
      const head = BigInt(await client.request({ method: "eth_blockNumber" }));
      const newBlock = await readBlocks(client, watcher, head);
      // the found hashes' receipts (of those still waited for), with those of waiters that have waited long, or past a
      // jump, asked for directly
      const waited = new Set([...watcher.waiters].flatMap((waiter) => waiter.hashes));
      for (const hash of watcher.found) if (!waited.has(hash)) watcher.found.delete(hash);
      const asked = new Set(watcher.found);
      for (const waiter of watcher.waiters) {
        const late = waiter.blocks >= LATE_BLOCKS && !waiter.askedDirectly;
        if (!late && !waiter.askNow) continue;
        waiter.askedDirectly ||= late;
        waiter.askNow = false;
        for (const hash of waiter.hashes) asked.add(hash);
      }
      if (asked.size) deliver(watcher, await receiptsOf(client, asked));
      if (watcher.waiters.size && workDue(Date.now() - watcher.lastWork, newBlock)) {
        watcher.lastWork = Date.now();
        await work(client, watcher, head);
      }
    });
  } catch {
    // the node erred or did not answer: asked again on the next tick
  }
  if (watcher.waiters.size) return schedule(chainId, watcher);
  // nothing waits: stopped, and started afresh by the next waiter
  watcher.timer = null;
  watcher.seen = null;
  watcher.recent.clear();
  watcher.found.clear();
}
