// The tokens a form names by contract, as their contracts describe themselves (asked of the server, which reads the
// chain): a cap typed in a token's units needs its decimals, which this page cannot read itself. An answer is kept for
// the page's life (a contract's symbol and decimals do not change); a failure is asked again when the field changes.
import { useEffect, useState } from "react";
import { callApi, messageOf } from "@/components/browser/api";
import type { PickableToken } from "@/lib/wallet/policy-presets";

export type ContractToken = { token: PickableToken } | { error: string };

const keyOf = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;
const asked = new Map<string, Promise<ContractToken>>();

/** The token at `address` on `chainId`, or why it has no units (not an ERC-20, chain silent); asked once per page. */
function lookUpToken(chainId: number, address: string): Promise<ContractToken> {
  const key = keyOf(chainId, address);
  const known = asked.get(key);
  if (known) return known;
  const query = new URLSearchParams({ chain_id: String(chainId), address });
  const lookup = callApi<{ symbol: string; decimals: number }>(`/api/tokens?${query}`, undefined, "GET").then(
    ({ symbol, decimals }) => ({ token: { chainId, address, symbol, decimals } }),
    (error: unknown) => {
      asked.delete(key); // a silent chain may answer next time
      return { error: messageOf(error) };
    },
  );
  asked.set(key, lookup);
  return lookup;
}

/** The given contracts that answer as ERC-20s, once each has answered (at once for those already asked). */
export async function tokensAt(contracts: { chainId: number; address: string }[]): Promise<PickableToken[]> {
  const reads = await Promise.all(contracts.map(({ chainId, address }) => lookUpToken(chainId, address)));
  return reads.flatMap((read) => ("token" in read ? [read.token] : []));
}

/** What each of `contracts` said it is, once it answered (undefined while it is read, and for a null). */
export function useContractTokens(contracts: ({ chainId: number; address: string } | null)[]): (ContractToken | undefined)[] {
  const [reads, setReads] = useState<Record<string, ContractToken>>({});
  const keys = contracts.map((contract) => (contract ? keyOf(contract.chainId, contract.address) : ""));
  const asking = keys.join(" ");
  useEffect(() => {
    for (const key of asking.split(" ").filter(Boolean)) {
      const [chainId, address] = key.split(":");
      void lookUpToken(Number(chainId), address).then((read) => setReads((before) => ({ ...before, [key]: read })));
    }
  }, [asking]);
  return keys.map((key) => (key ? reads[key] : undefined));
}
