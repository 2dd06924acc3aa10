// What a requirement asks to be paid in: an ERC-20 the chain describes (its symbol and decimals), or it is refused
// before anything is chosen, written or held. A contract that is no ERC-20, or an address with no code, would
// otherwise reach the person as "Pay 10000 base units of an unknown token".
import { getAddress } from "viem";
import { tokenMetadata } from "@/lib/wallet/token-metadata";
import { ChainUnansweredError } from "@/lib/wallet/chains";
import { exactOfferChain } from "./choose";
import { X402RequirementError, type PaymentRequired } from "./requirement";

/**
 * `required` without the offers whose asset, on a chain this service uses, is no ERC-20 (read once, then remembered:
 * lib/wallet/token-metadata.ts); the others are left for the choice to judge. Refused when no offer is left; a chain
 * that does not say in time what the asset is refuses it too, since nothing could be shown in the token's units.
 */
export async function readableAssets(required: PaymentRequired, configured: readonly number[]): Promise<PaymentRequired> {
  const read = await Promise.all(
    required.accepts.map(async (offer) => {
      const chainId = exactOfferChain(offer, configured);
      if (typeof chainId === "string") return null;
      const metadata = await tokenMetadata(chainId, getAddress(offer.asset));
      return metadata.standard === "erc20"
        ? null
        : { chainId, asset: getAddress(offer.asset), unread: metadata.standard === "unknown" && metadata.unread };
    }),
  );
  const accepts = required.accepts.filter((_, index) => read[index] === null);
  if (accepts.length) return { ...required, accepts };
  const unreadable = read.find((entry) => entry !== null && !entry.unread);
  if (!unreadable) {
    const silent = read.find((entry) => entry !== null)!;
    throw new ChainUnansweredError(`Chain ${silent.chainId} did not answer in time to say what ${silent.asset} is. Nothing was signed.`);
  }
  throw new X402RequirementError(
    `This requirement asks to be paid in ${unreadable.asset} on chain ${unreadable.chainId}, which is no token Agent Wallet can ` +
      "read (no ERC-20 symbol and decimals: a contract that is no ERC-20, or an address with no code). Nothing was signed.",
  );
}
