// pay_x402 at a stock merchant by permit2 (decision 0039), for a token without EIP-3009: paid from the allowance's
// agent account as an eip3009 offer is (account.ts), but the account signs x402's Permit2 witness transfer (the one-tap
// path's builder, toSign) of exactly the amount to the payee, which the merchant's facilitator settles through x402's
// exact proxy. Before its first such payment in a token, the account lets Permit2 take it (lib/allowances
// agent-account-permit2.ts: its gas sent by the relayer, once), before anything is funded.
import { toHex, type Hex } from "viem";
import { approvedForPermit2 } from "@/lib/allowances/agent-account-permit2";
import { onChain } from "@/lib/wallet/chains";
import type { ServerAccount } from "@/lib/wallet/native-signer";
import { PERMIT2, X402_EXACT_PERMIT2_PROXY } from "@/lib/wallet/permits";
import { X402NotPayableError } from "./choose";
import type { Permit2Payload } from "./answer";
import type { Authorizable } from "./one-tap";

type Permit2Choice = Extract<Authorizable, { method: "permit2" }> & { allowanceId: string };

/**
 * The token, Permit2 and x402's exact proxy as the chain has them, each with code: otherwise nothing could settle the
 * payment, and it is refused before the account approves or anything is funded.
 */
async function checkedForPermit2(choice: Permit2Choice): Promise<void> {
  const codes = await onChain(choice.chainId, (client) =>
    Promise.all([choice.asset, PERMIT2, X402_EXACT_PERMIT2_PROXY].map((address) => client.getCode({ address }))),
  );
  const missing = ["the token", "Permit2", "x402's exact Permit2 proxy"].filter((_, index) => !codes[index] || codes[index] === "0x");
  if (missing.length)
    throw new X402NotPayableError(
      `This offer is paid through Permit2, but on chain ${choice.chainId} ${missing.join(" and ")} ` +
        `${missing.length > 1 ? "have" : "has"} no code. Nothing was paid.`,
    );
}

/** A permit2 offer made payable from `account`: checked on chain, then Permit2 let take the token (once per token). */
export async function readyForPermit2(choice: Permit2Choice, account: Promise<ServerAccount>, userId: string): Promise<void> {
  await checkedForPermit2(choice);
  const owner = { allowanceId: choice.allowanceId, userId, chainId: choice.chainId };
  await approvedForPermit2(owner, await account, choice.asset, choice.amount);
}

/** A Permit2 payment's nonce as the X402Payment row keeps it (leafHash): 32 bytes, hex. */
export const permit2NonceKey = (payload: Permit2Payload): Hex => toHex(BigInt(payload.permit2Authorization.nonce), { size: 32 });
