// get_balance: what a granted credential holds on a chain, its coin and tokens, each with its value in the configured
// currency when a fresh price gives one (./feeds.ts), never a guess.
import { erc20Abi, formatEther, formatUnits, getAddress, type Address } from "viem";
import { db } from "@/lib/db";
import type { AgentContext } from "@/lib/wallet/agent-context";
import type { ToolOutput } from "@/contract";
import { AppError } from "@/lib/http/errors";
import { config } from "@/lib/config";
import { chainById, onChain } from "@/lib/wallet/chains";
import { parsePolicy } from "@/lib/wallet/policy";
import { tokenMetadata } from "@/lib/wallet/token-metadata";
import { priceCurrency, priceOf } from "./feeds";
import { moneyValue, type Price } from "./format";

/** The chain a balance is read on when none is named: the service's only one, or a clear error naming them. */
function onlyChain() {
  const { chains } = config();
  if (chains.length === 1) return chains[0];
  const named = chains.map((chain) => `${chain.id} (${chain.name})`).join(", ");
  throw new AppError("chain_required", `Name chain_id: this service has several chains: ${named}`, 400);
}

/** The tokens the credential's policy in this grant caps on `chainId`: what the person chose to limit, so worth showing. */
async function cappedTokens(grantId: string, credentialId: string, chainId: number): Promise<string[]> {
  const entry = await db().grantCredential.findUnique({
    where: { grantId_credentialId: { grantId, credentialId } },
    select: { policy: true },
  });
  return (parsePolicy(entry?.policy ?? "{}").tokens ?? []).filter((rule) => rule.chain_id === chainId).map((rule) => rule.token);
}

/** What a balance is worth in the configured currency; null without a fresh price (lib/prices), never a guess. */
function valueOf(amount: bigint, decimals: number, price: Price | null) {
  return price && moneyValue(amount, decimals, price, priceCurrency());
}

/** One token's balance in its own units; what the contract does not answer is null, never a guess. */
async function tokenBalance(chainId: number, holder: Address, token: Address) {
  const [metadata, balance, price] = await Promise.all([
    tokenMetadata(chainId, token),
    onChain(chainId, (client) => client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] })).catch(
      () => null,
    ),
    priceOf(chainId, token),
  ]);
  const erc20 = metadata.standard === "erc20" ? metadata : null;
  const read = balance !== null && erc20;
  return {
    token,
    symbol: erc20?.symbol ?? null,
    decimals: erc20?.decimals ?? null,
    balance: balance === null ? null : balance.toString(),
    formatted: read ? formatUnits(balance, erc20.decimals) : null,
    fiat: read ? valueOf(balance, erc20.decimals, price) : null,
  };
}

/**
 * The native balance of a granted credential (any approval mode may read), and its balances of the tokens asked for
 * or, when none are named, of those the chain lists and the credential's limits cap.
 */
export async function getBalance(
  agent: AgentContext,
  credentialId: string,
  chainId: number | undefined,
  tokens?: string[],
): Promise<ToolOutput<"get_balance">> {
  if (!agent.credentials.some((entry) => entry.credentialId === credentialId)) {
    throw new AppError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  }
  const credential = await db().credential.findFirst({ where: { id: credentialId, userId: agent.userId }, select: { address: true } });
  if (!credential) throw new AppError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  const chain = chainId === undefined ? onlyChain() : chainById(chainId);
  const holder = credential.address as Address;
  // Left out: the tokens the app lists on the chain (CHAINS' `tokens`), then those the person's limits cap.
  const asked = tokens ?? [...(chain.tokens ?? []), ...(await cappedTokens(agent.grantId, credentialId, chain.id))];
  const unique = [...new Set(asked.map((token) => getAddress(token)))];
  const [wei, price, tokenBalances] = await Promise.all([
    onChain(chain.id, (client) => client.getBalance({ address: holder })),
    priceOf(chain.id, null),
    Promise.all(unique.map((token) => tokenBalance(chain.id, holder, token))),
  ]);
  return {
    credential_id: credentialId,
    address: credential.address,
    chain_id: chain.id,
    chain_name: chain.name,
    symbol: chain.symbol,
    wei: wei.toString(),
    formatted: formatEther(wei),
    fiat: valueOf(wei, 18, price),
    tokens: tokenBalances,
  };
}
