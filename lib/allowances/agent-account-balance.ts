// What an allowance's agent account holds free of its payments on their way (decisions 0035, 0038): its balance of a
// token less the authorizations it signed that no facilitator settled yet nor expired, each asked of the chain. A
// payment from the account is signed only within it; with a float it is what "left" adds beside the chain's left.
import { erc20Abi, parseAbi, type Address, type Hex } from "viem";
import { db } from "@/lib/db";
import { onChain } from "@/lib/wallet/chains";
import { PERMIT2 } from "@/lib/wallet/permits";

/** The agent account's authorizations not yet settled nor expired, as the database has them. */
export const UNSETTLED = `authorized`;

/** An authorization's validBefore is read by the chain's clock, which may run behind ours: it counts this much longer. */
const EXPIRY_MARGIN_MS = 60_000;

const AUTHORIZATION_STATE = parseAbi(["function authorizationState(address authorizer, bytes32 nonce) view returns (bool)"]);

const NONCE_BITMAP = parseAbi(["function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)"]);

/** Whether Permit2 has spent the account's nonce `key` (permit2NonceKey): the payment settled. */
async function permit2NonceUsed(chainId: number, account: Address, key: Hex): Promise<boolean> {
  const nonce = BigInt(key);
  const word = await onChain(chainId, (client) =>
    client.readContract({ address: PERMIT2, abi: NONCE_BITMAP, functionName: "nonceBitmap", args: [account, nonce >> 8n] }),
  );
  return ((word >> (nonce & 0xffn)) & 1n) === 1n;
}

/** Whose claims on which token: `permit2`, its authorizations are Permit2's transfers (their nonces Permit2's). */
export type Claims = { allowanceId: string; chainId: number; token: Address; permit2: boolean };

/**
 * What the agent account holds that no unsettled authorization of it claims, each authorization asked of the chain
 * (used: settled; past its validBefore and unused: expired, its amount free again).
 */
export async function unclaimed(claims: Claims, account: Address, now: Date): Promise<bigint> {
  const { allowanceId, chainId, token } = claims;
  const rows = await db().x402Payment.findMany({ where: { allowanceId, status: UNSETTLED, token } });
  const [balance, used] = await Promise.all([
    onChain(chainId, (client) => client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [account] })),
    Promise.all(
      rows.map((row) =>
        claims.permit2
          ? permit2NonceUsed(chainId, account, row.leafHash as Hex)
          : onChain(chainId, (client) =>
              client.readContract({
                address: token,
                abi: AUTHORIZATION_STATE,
                functionName: "authorizationState",
                args: [account, row.leafHash as Hex],
              }),
            ),
      ),
    ),
  ]);
  let claimed = 0n;
  const settled: string[] = [];
  const expired: string[] = [];
  for (const [index, row] of rows.entries()) {
    if (used[index]) settled.push(row.id);
    else if (row.expiresAt.getTime() + EXPIRY_MARGIN_MS < now.getTime()) expired.push(row.id);
    else claimed += BigInt(row.amount);
  }
  // one statement a status, on the payment's path
  const marked = (ids: string[], status: string) =>
    ids.length ? db().x402Payment.updateMany({ where: { id: { in: ids } }, data: { status } }) : null;
  await Promise.all([marked(settled, "settled"), marked(expired, "expired")]);
  return balance > claimed ? balance - claimed : 0n;
}
