import { createPublicClient, defineChain, type PublicClient } from "viem";
import { config, type Chain, type Config } from "@/lib/config";
import { AppError } from "@/lib/http/errors";
import { frameworkOn, type Framework } from "./delegation-framework";
import { jsonRpcTransport } from "./rpc-transport";

/** An RPC that does not answer within this bound is a clear error, not a hang. */
const RPC_TIMEOUT_MS = 8_000;

export class ChainError extends AppError {
  constructor(message: string) {
    super("chain_error", message, 502);
  }
}

/** The RPC gave no answer (timeout, connection failure): what was sent may or may not have reached the node. */
export class ChainUnansweredError extends ChainError {}

/** The tokens the operator lists for `chainId` (config), lowercased: none for a chain it does not configure. */
export function listedTokens(chainId: number | null): Set<string> {
  return new Set((config().chains.find((chain) => chain.id === chainId)?.tokens ?? []).map((token) => token.toLowerCase()));
}

export function chainById(chainId: number): Chain {
  const chain = config().chains.find((candidate) => candidate.id === chainId);
  if (!chain) {
    throw new AppError(
      "unknown_chain",
      `Chain ${chainId} is not configured; available: ${config()
        .chains.map((c) => `${c.id} (${c.name})`)
        .join(", ")}`,
      400,
    );
  }
  return chain;
}

const clients = new Map<number, PublicClient>();

/** A viem client for a configured chain (one per chain, reused). */
function chainClient(chainId: number): PublicClient {
  let client = clients.get(chainId);
  if (!client) {
    const chain = chainById(chainId);
    const definition = defineChain({
      id: chain.id,
      name: chain.name,
      nativeCurrency: { name: chain.symbol, symbol: chain.symbol, decimals: 18 },
      rpcUrls: { default: { http: [chain.rpcUrl] } },
    });
    client = createPublicClient({
      chain: definition,
      transport: jsonRpcTransport(chain.rpcUrl, { timeoutMs: RPC_TIMEOUT_MS }),
    }) as PublicClient;
    clients.set(chainId, client);
  }
  return client;
}

/**
 * The node never answered (down, unreachable, or slower than the timeout), as opposed to answering with an error. viem
 * wraps the transport's error in a contract read's or a gas estimate's own, so the whole chain of causes is asked.
 */
function unanswered(error: unknown, firstLine: string): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (/HttpRequestError|TimeoutError|FetchError/.test(cause.name)) return true;
  }
  return /fetch failed|timed out|ECONNREFUSED/i.test(firstLine);
}

/**
 * Runs an RPC call and turns its failures into a ChainError that names the chain: a ChainUnansweredError when the node
 * did not answer, whatever the call (a broadcast then may or may not have reached it).
 */
export async function onChain<T>(chainId: number, action: (client: PublicClient) => Promise<T>): Promise<T> {
  const client = chainClient(chainId);
  try {
    return await action(client);
  } catch (error) {
    if (error instanceof AppError) throw error;
    const firstLine = ((error as { shortMessage?: string }).shortMessage ?? (error as Error).message).split("\n")[0];
    if (unanswered(error, firstLine)) {
      throw new ChainUnansweredError(`The ${chainById(chainId).name} RPC (chain ${chainId}) did not answer: ${firstLine}`);
    }
    throw new ChainError(firstLine);
  }
}

/** Reads that decorate a decision wait this long at most: a slow or dead node must not hold the page. */
export const READ_BUDGET_MS = 800;

/** `read`'s answer, or null when it fails or takes longer than the budget (it is then left to finish unheard). */
export async function quickly<T>(read: () => Promise<T>, budgetMs = READ_BUDGET_MS): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), budgetMs);
  });
  try {
    return await Promise.race([read().catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each settings' frameworks by chain, read once: every payment asks, and reading the addresses cost 0.3 ms. */
const frameworksOf = new WeakMap<Config, Map<number, Framework | null>>();

/** The Delegation Framework on a configured chain (published, or ALLOWANCE_FRAMEWORKS), or null: none there. */
export function allowanceFramework(chainId: number): Framework | null {
  const settings = config();
  let known = frameworksOf.get(settings);
  if (!known) frameworksOf.set(settings, (known = new Map()));
  if (!known.has(chainId))
    known.set(chainId, settings.chains.some((chain) => chain.id === chainId) ? frameworkOn(chainId, settings.allowanceFrameworks) : null);
  return known.get(chainId)!;
}
