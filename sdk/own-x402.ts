// Paying an x402 merchant from an allowance your own key spends, with nothing of the payment signed by Agent Wallet.
// A stock merchant's offer (the exact scheme by eip3009, as every published facilitator settles it): the allowance
// funds your key's address with exactly the payment, through Agent Wallet's relayer (payFromAllowance: a one-time
// delegation your key signs, the chain capping it), and your key then signs EIP-3009's TransferWithAuthorization to
// the merchant; only the funding passes through the server. An erc7710 offer: your key signs a one-time delegation
// of exactly the transfer to the merchant, under the allowance's, that only the merchant's facilitators can redeem,
// and the server sees nothing of it until the chain does (its own-payments watcher counts it then).
import {
  ANY_BENEFICIARY,
  createExactExecutionTerms,
  createLimitedCallsTerms,
  createRedeemerTerms,
  createTimestampTerms,
  decodeDelegations,
  encodeDelegations,
  hashDelegation,
} from "@metamask/delegation-core";
import { DELEGATOR_CONTRACTS } from "@metamask/delegation-deployments";
import {
  bytesToBigInt,
  bytesToHex,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  isAddress,
  isAddressEqual,
  type Address,
  type Hex,
  type LocalAccount,
} from "viem";
import type { AgentWalletClient } from "./client";
import { FRAMEWORK_VERSION, leafEnforcers, payFromAllowance } from "./allowance-payment";
import { PaymentRefusedError } from "./errors";
import { encodeBase64Json, jsonOf, networkChainId, type GivenRequirement } from "./x402-guard";
import type { GrantedPermission } from "../contract";
import { delegationTypedData } from "../contract/delegation";
import { TRANSFER_WITH_AUTHORIZATION } from "../contract/eip3009";

/** The key that spends an allowance of yours, and that allowance, to pay x402 merchants with (payingFetch's `ownKey`). */
export type OwnKey = {
  /** any viem account of the key the allowance names (request_allowance's `to`) */
  account: Pick<LocalAccount, "address" | "signTypedData">;
  /**
   * the allowance, as get_request's `permission` answered it: a token of it must be payable to `account` (any payee)
   * for an eip3009 offer, or to the merchant for an erc7710 one
   */
  permission: GrantedPermission;
  /** payFromAllowance's, on a chain without a published Delegation Framework */
  exactExecutionEnforcer?: Address;
  /** the RedeemerEnforcer you trust, for an erc7710 offer naming several facilitators on such a chain */
  redeemerEnforcer?: Address;
};

type Entry = Record<string, unknown>;

/** The header to retry with, and what it pays as pay_x402 would say it, but for the token's symbol and decimals. */
export type OwnKeyPaid = {
  header: "PAYMENT-SIGNATURE" | "X-PAYMENT";
  value: string;
  /** the funding's request (eip3009), or the hash of the delegation your key signed (erc7710) */
  paymentId: string;
  amount: bigint;
  asset: Address;
  network: string;
  payee: Address;
  resource: { url: string; description: string | null };
  expiresAt: Date;
};
const text = (value: unknown) => (typeof value === "string" ? value : "");

type Granted = GrantedPermission["granted"][number];

/** The permission's delegation of `asset` that may pay `payee` (any payee, or `payee` named), if it has one. */
function grantedPaying(permission: GrantedPermission, asset: string, payee: Address): Granted | undefined {
  return permission.granted.find((granted) => {
    const token = (granted.permission.data as { tokenAddress?: string }).tokenAddress;
    return (
      token !== undefined &&
      isAddressEqual(token as Address, asset as Address) &&
      (!granted.payees.length || granted.payees.some((each) => isAddressEqual(each as Address, payee)))
    );
  });
}

/** An erc7710 offer's facilitators (extra.facilitatorAddresses), when it names one or more addresses and nothing else. */
function facilitatorsOf(extra: Entry): Address[] {
  const named = extra.facilitatorAddresses;
  if (!Array.isArray(named) || !named.length || !named.every((each) => typeof each === "string" && isAddress(each))) return [];
  return named.map((each: string) => getAddress(each));
}

type OwnOffer = { entry: Entry; method: "erc7710" | "eip3009"; granted: Granted };

/**
 * The first offer your key can pay, exact on the allowance's chain: by erc7710 from a delegation that may pay its
 * payee, or by eip3009 (the default transfer method) from one that may pay your key, which it funds.
 */
async function ownOffer(entries: Entry[], own: OwnKey): Promise<OwnOffer | null> {
  for (const entry of entries) {
    const extra = (entry.extra ?? {}) as Entry;
    const method = text(extra.assetTransferMethod) || "eip3009";
    if (entry.scheme !== "exact" || !isAddress(text(entry.asset)) || !isAddress(text(entry.payTo))) continue;
    if ((await networkChainId(text(entry.network))) !== own.permission.chain_id) continue;
    const payee = method === "erc7710" ? getAddress(text(entry.payTo)) : getAddress(own.account.address);
    const granted = grantedPaying(own.permission, text(entry.asset), payee);
    if (!granted) continue;
    if (method === "erc7710" && facilitatorsOf(extra).length) return { entry, method, granted };
    if (method === "eip3009" && text(extra.name) && text(extra.version)) return { entry, method, granted };
  }
  return null;
}

/** What the key signs for an offer: the payload, the payment's id (onPayment's payment_id) and until when it holds. */
type Signed = { payload: Record<string, unknown>; paymentId: string; validBefore: bigint };

/** Until the merchant's timeout, as @x402/evm's client sets it. */
const validUntil = (entry: Entry) => BigInt(Math.floor(Date.now() / 1000) + (Number(entry.maxTimeoutSeconds) || 60));

/**
 * erc7710: a delegation from your key under the one the allowance gives it, of exactly this transfer to the payee, once, until the
 * merchant's timeout, to its facilitator (or, for several, to any of them by a Redeemer caveat). Its enforcers are the
 * ones payFromAllowance vouches for; the chain holds the allowance's own caps, payees and end over it.
 */
async function delegatedPayment(own: OwnKey, { entry, granted }: OwnOffer, amount: bigint, required: GivenRequirement): Promise<Signed> {
  const { permission } = own;
  // the delegations to your key, its own first and the person's last (one, unless a slice was passed on to you)
  const chain = decodeDelegations(granted.context as Hex);
  const { trusted, count, end } = leafEnforcers(permission, granted, chain[0], own.exactExecutionEnforcer);
  const validBefore = validUntil(entry);
  const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [getAddress(text(entry.payTo)), amount] });
  const caveats = [
    {
      enforcer: trusted,
      terms: createExactExecutionTerms({ execution: { target: getAddress(text(entry.asset)), value: 0n, callData: transfer } }),
    },
    { enforcer: count, terms: createLimitedCallsTerms({ limit: 1 }) },
    { enforcer: end, terms: createTimestampTerms({ afterThreshold: 0, beforeThreshold: Number(validBefore) }) },
  ];
  const facilitators = facilitatorsOf(entry.extra as Entry);
  if (facilitators.length > 1)
    caveats.push({ enforcer: redeemerEnforcer(own, required), terms: createRedeemerTerms({ redeemers: facilitators }) });
  const leaf = {
    delegate: facilitators.length > 1 ? ANY_BENEFICIARY : facilitators[0],
    delegator: getAddress(own.account.address),
    authority: hashDelegation(chain[0]),
    caveats: caveats.map((caveat) => ({ ...caveat, args: "0x" as Hex })),
    salt: bytesToBigInt(globalThis.crypto.getRandomValues(new Uint8Array(16))),
  };
  const manager = getAddress(permission.delegation_manager);
  const signature = await own.account.signTypedData(delegationTypedData(manager, permission.chain_id, leaf));
  return {
    payload: {
      delegationManager: manager,
      permissionContext: encodeDelegations([{ ...leaf, signature }, ...chain]),
      delegator: getAddress(chain.at(-1)!.delegator),
    },
    paymentId: hashDelegation({ ...leaf, signature }),
    validBefore,
  };
}

function redeemerEnforcer(own: OwnKey, required: GivenRequirement): Address {
  const published = DELEGATOR_CONTRACTS[FRAMEWORK_VERSION]?.[own.permission.chain_id]?.RedeemerEnforcer as Address | undefined;
  const trusted = own.redeemerEnforcer ?? published;
  if (!trusted)
    throw new PaymentRefusedError(
      "not_own_key_payable",
      `The offer names several facilitators, and chain ${own.permission.chain_id} has no published Delegation Framework: ` +
        "pass redeemerEnforcer",
      required,
    );
  return trusted;
}

/**
 * eip3009: the allowance funds your key with exactly the payment through the relayer, then your key authorizes its
 * transfer to the payee. The funding's request is the payment's id.
 */
async function fundedAuthorization(
  wallet: AgentWalletClient,
  own: OwnKey,
  credentialId: string,
  { entry }: OwnOffer,
  amount: bigint,
  required: GivenRequirement,
  idempotencyKey?: string,
): Promise<Signed> {
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
    // valid at once, as @x402/evm's client signs it
    validAfter: 0n,
    validBefore: validUntil(entry),
    nonce: bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(32))) as Hex,
  };
  const signature = await own.account.signTypedData({
    domain: { name: text(extra.name), version: text(extra.version), chainId: own.permission.chain_id, verifyingContract: asset },
    types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  return {
    payload: {
      signature,
      authorization: { ...authorization, value: String(amount), validAfter: "0", validBefore: String(authorization.validBefore) },
    },
    paymentId: funding.request_id,
    validBefore: authorization.validBefore,
  };
}

/**
 * The payment header for `required` (already checked by payingFetch's guards), paid with your own key: by a one-time
 * delegation to the merchant's facilitator (erc7710), or funded from the allowance through the relayer and then
 * authorized by your key (eip3009). Throws PaymentRefusedError when no offer is one your key can pay, and
 * payFromAllowance's errors when the funding is refused; nothing is signed for the merchant then.
 */
export async function ownKeyPayment(
  wallet: AgentWalletClient,
  own: OwnKey,
  credentialId: string,
  required: GivenRequirement,
  idempotencyKey?: string,
): Promise<OwnKeyPaid> {
  const json = jsonOf(required)!;
  const offer = await ownOffer(json.accepts as Entry[], own);
  if (!offer)
    throw new PaymentRefusedError(
      "not_own_key_payable",
      "No offer is exact, by erc7710 to a payee or by eip3009, in a token of the allowance your key spends that may pay it",
      required,
    );
  const { entry } = offer;
  const version = json.x402Version as 1 | 2;
  const amount = BigInt(text(version === 2 ? entry.amount : entry.maxAmountRequired));
  const { payload, paymentId, validBefore } =
    offer.method === "erc7710"
      ? await delegatedPayment(own, offer, amount, required)
      : await fundedAuthorization(wallet, own, credentialId, offer, amount, required, idempotencyKey);
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
    paymentId,
    amount,
    asset: getAddress(text(entry.asset)),
    network: text(entry.network),
    payee: getAddress(text(entry.payTo)),
    resource: { url: text(version === 2 ? resource?.url : entry.resource), description: text(resource?.description) || null },
    expiresAt: new Date(Number(validBefore) * 1000),
  };
}
