// Paying a stock x402 merchant (the exact scheme by eip3009, as every published facilitator settles it) from an
// allowance your own key spends: the allowance funds your key's address with exactly the payment, through Agent
// Wallet's relayer (payFromAllowance: a one-time delegation your key signs, the chain capping it), and your key then
// signs EIP-3009's TransferWithAuthorization to the merchant. Agent Wallet signs nothing of it: its server neither
// holds nor sees the authorization, and only the funding passes through it.
import { bytesToHex, encodeFunctionData, erc20Abi, getAddress, isAddressEqual, type Address, type Hex, type LocalAccount } from "viem";
import type { AgentWalletClient } from "./client";
import { payFromAllowance } from "./allowance-payment";
import { PaymentRefusedError } from "./errors";
import { encodeBase64Json, jsonOf, networkChainId, type GivenRequirement } from "./x402-guard";
import type { GrantedPermission } from "../contract";
import { TRANSFER_WITH_AUTHORIZATION } from "../contract/eip3009";

/** The key that spends an allowance of yours, and that allowance, to pay x402 merchants with (payingFetch's `ownKey`). */
export type OwnKey = {
  /** any viem account of the key the allowance names (request_allowance's `to`) */
  account: Pick<LocalAccount, "address" | "signTypedData">;
  /** the allowance, as get_request's `permission` answered it: a token of it must be payable to `account` (any payee) */
  permission: GrantedPermission;
  /** payFromAllowance's, on a chain without a published Delegation Framework */
  exactExecutionEnforcer?: Address;
};

type Entry = Record<string, unknown>;

/** The header to retry with, and what it pays as pay_x402 would say it, but for the token's symbol and decimals. */
export type OwnKeyPaid = {
  header: "PAYMENT-SIGNATURE" | "X-PAYMENT";
  value: string;
  /** the funding's request: the payment's id, as a payment of the allowance */
  fundingRequestId: string;
  amount: bigint;
  asset: Address;
  network: string;
  payee: Address;
  resource: { url: string; description: string | null };
  expiresAt: Date;
};
const text = (value: unknown) => (typeof value === "string" ? value : "");

/** Whether the permission has a delegation of `asset` that may pay `payee`: any payee, or `payee` named. */
function paysTo(permission: GrantedPermission, asset: string, payee: Address): boolean {
  return permission.granted.some((granted) => {
    const token = (granted.permission.data as { tokenAddress?: string }).tokenAddress;
    return (
      token !== undefined &&
      isAddressEqual(token as Address, asset as Address) &&
      (!granted.payees.length || granted.payees.some((each) => isAddressEqual(each as Address, payee)))
    );
  });
}

/** The first offer your key can pay: exact by eip3009 (the default transfer method) on the allowance's chain and token. */
async function ownOffer(entries: Entry[], own: OwnKey): Promise<Entry | null> {
  for (const entry of entries) {
    const extra = (entry.extra ?? {}) as Entry;
    const method = text(extra.assetTransferMethod) || "eip3009";
    if (entry.scheme !== "exact" || method !== "eip3009" || !text(extra.name) || !text(extra.version)) continue;
    if ((await networkChainId(text(entry.network))) !== own.permission.chain_id) continue;
    if (!/^0x[0-9a-fA-F]{40}$/.test(text(entry.asset)) || !/^0x[0-9a-fA-F]{40}$/.test(text(entry.payTo))) continue;
    if (paysTo(own.permission, text(entry.asset), getAddress(own.account.address))) return entry;
  }
  return null;
}

/**
 * The payment header for `required` (already checked by payingFetch's guards), paid with your own key: funded from the
 * allowance through the relayer, then authorized by your key. Throws PaymentRefusedError when no offer is one your key
 * can pay, and payFromAllowance's errors when the funding is refused; nothing is signed for the merchant then.
 */
export async function ownKeyPayment(
  wallet: AgentWalletClient,
  own: OwnKey,
  credentialId: string,
  required: GivenRequirement,
  idempotencyKey?: string,
): Promise<OwnKeyPaid> {
  const json = jsonOf(required)!;
  const entry = await ownOffer(json.accepts as Entry[], own);
  if (!entry)
    throw new PaymentRefusedError(
      "not_own_key_payable",
      "No offer is exact by eip3009 in a token of the allowance your key spends, payable to your key",
      required,
    );
  const version = json.x402Version as 1 | 2;
  const amount = BigInt(text(version === 2 ? entry.amount : entry.maxAmountRequired));
  const from = getAddress(own.account.address);
  const asset = getAddress(text(entry.asset));
  const funding = await payFromAllowance(
    wallet,
    own.account,
    own.permission,
    { to: asset, data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [from, amount] }) },
    { credentialId, exactExecutionEnforcer: own.exactExecutionEnforcer, ...(idempotencyKey && { idempotencyKey }) },
  );
  // an authorization of more than the key holds would not settle: the funding must have landed first
  if (funding.status !== "completed")
    throw new PaymentRefusedError(
      "not_own_key_payable",
      `Its funding from the allowance (request ${funding.request_id}) is ${funding.status}, not yet landed; pay again once it has`,
      required,
    );
  const extra = entry.extra as Entry;
  const authorization = {
    from,
    to: getAddress(text(entry.payTo)),
    value: amount,
    // valid at once, as @x402/evm's client signs it, until the merchant's timeout
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + (Number(entry.maxTimeoutSeconds) || 60)),
    nonce: bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(32))) as Hex,
  };
  const signature = await own.account.signTypedData({
    domain: { name: text(extra.name), version: text(extra.version), chainId: own.permission.chain_id, verifyingContract: asset },
    types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  const payload = {
    signature,
    authorization: {
      ...authorization,
      value: String(authorization.value),
      validAfter: "0",
      validBefore: String(authorization.validBefore),
    },
  };
  // V2 sends back the accepted entry exactly as offered; V1 names its scheme and network
  const answer =
    version === 2
      ? {
          header: "PAYMENT-SIGNATURE" as const,
          value: encodeBase64Json({ x402Version: 2, resource: json.resource, accepted: entry, payload }),
        }
      : {
          header: "X-PAYMENT" as const,
          value: encodeBase64Json({ x402Version: 1, scheme: entry.scheme, network: entry.network, payload }),
        };
  const resource = (version === 2 ? json.resource : entry) as Entry | undefined;
  return {
    ...answer,
    fundingRequestId: funding.request_id,
    amount,
    asset,
    network: text(entry.network),
    payee: authorization.to,
    resource: { url: text(version === 2 ? resource?.url : entry.resource), description: text(resource?.description) || null },
    expiresAt: new Date(Number(authorization.validBefore) * 1000),
  };
}
