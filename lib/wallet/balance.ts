import { formatEther } from "viem";
import { db } from "@/lib/db";
import type { AgentContext } from "./agent-context";
import type { ToolOutput } from "@/contract";
import { AppError } from "@/lib/http/errors";
import { config } from "@/lib/config";
import { chainById, onChain } from "./chains";

/** The chain a balance is read on when none is named: the service's only one, or a clear error naming them. */
function onlyChain() {
  const { chains } = config();
  if (chains.length === 1) return chains[0];
  const named = chains.map((chain) => `${chain.id} (${chain.name})`).join(", ");
  throw new AppError("chain_required", `Name chain_id: this service has several chains: ${named}`, 400);
}

/** The native balance of a granted credential (any approval mode may read). */
export async function getBalance(
  agent: AgentContext,
  credentialId: string,
  chainId: number | undefined,
): Promise<ToolOutput<"get_balance">> {
  if (!agent.credentials.some((entry) => entry.credentialId === credentialId)) {
    throw new AppError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  }
  const credential = await db().credential.findFirst({ where: { id: credentialId, userId: agent.userId }, select: { address: true } });
  if (!credential) throw new AppError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  const chain = chainId === undefined ? onlyChain() : chainById(chainId);
  const wei = await onChain(chain.id, (client) => client.getBalance({ address: credential.address as `0x${string}` }));
  return {
    credential_id: credentialId,
    address: credential.address,
    chain_id: chain.id,
    chain_name: chain.name,
    symbol: chain.symbol,
    wei: wei.toString(),
    formatted: formatEther(wei),
  };
}
