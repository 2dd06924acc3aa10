// pay_x402 outside an allowance (an `approve` credential): one tap. The chosen `accepts` entry becomes a pending request
// to sign typed data the person approves with their passkey as any typed data is, judged by the grant's policy as the
// token transfer it is: EIP-3009's TransferWithAuthorization (the exact scheme's eip3009 payload, @x402/evm's default),
// or a Permit2 witness transfer that only x402's exact proxy can spend, towards the payee alone (permit2, for tokens
// without EIP-3009; the wallet must already let Permit2 take the amount). Its signature completes the payment that
// get_request then answers. Agent Wallet signs nothing itself here and sends nothing on chain: the payee's facilitator
// submits it.
import { randomBytes } from "node:crypto";
import { erc20Abi, formatUnits, getAddress, hexToBigInt, toHex, type Address } from "viem";
import type { ToolInput, ToolOutput } from "@/contract";
import { assetNames } from "@/lib/allowances/view";
import { systemClock, type Clock } from "@/lib/clock";
import { config } from "@/lib/config";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { onChain } from "@/lib/wallet/chains";
import { PERMIT2, x402Permit2TypedData } from "@/lib/wallet/permits";
import { TRANSFER_WITH_AUTHORIZATION } from "@/contract/eip3009";
import type { Idempotency } from "@/lib/wallet/idempotency";
import { approvalUrl, REQUEST_TTL_SECONDS } from "@/lib/wallet/request-lifecycle";
import { createRequest } from "@/lib/wallet/requests";
import { paymentTerms, unsignedPayment, type AuthorizationPayload, type Permit2Payload } from "./answer";
import { cheapest, exactOfferChain } from "./choose";
import type { Offer, PaymentRequired } from "./requirement";

/**
 * An entry the person can pay by one signature: an EIP-3009 authorization in the token's EIP-712 domain (from the
 * entry's `extra`), or a Permit2 payment.
 */
export type Authorizable = { offer: Offer; chainId: number; asset: Address; payee: Address; amount: bigint } & (
  { method: "eip3009"; name: string; version: string } | { method: "permit2" }
);

/** Why `offer` cannot be paid by one signature, or what it pays (a permit2 entry still to be checked on chain). */
export function judgeAuthorizable(offer: Offer, configured: readonly number[]): Authorizable | string {
  const chainId = exactOfferChain(offer, configured);
  if (typeof chainId === "string") return chainId;
  // An entry naming no method is the exact scheme's default, eip3009.
  const method = offer.extra.assetTransferMethod ?? "eip3009";
  if (method === "erc7710") return `chain ${chainId} by erc7710, which Agent Wallet pays only within an allowance (ask the person for one)`;
  if (method !== "eip3009" && method !== "permit2")
    return `chain ${chainId} by ${String(method)}, a transfer method Agent Wallet does not know`;
  const amount = BigInt(offer.amount);
  if (amount <= 0n) return `a payment of ${offer.amount}`;
  const terms = { offer, chainId, asset: getAddress(offer.asset), payee: getAddress(offer.payTo), amount };
  if (method === "permit2") return { ...terms, method };
  const { name, version } = offer.extra;
  if (typeof name !== "string" || typeof version !== "string" || !name)
    return `chain ${chainId} by eip3009 without extra.name and extra.version (the token's EIP-712 domain)`;
  return { ...terms, method, name, version };
}

/**
 * A permit2 entry as it stands on chain: Permit2 takes the payment from the wallet's ERC-20 allowance to it, which the
 * person gives by a transaction of their own (approving it is no part of this signature, nor hidden in it).
 */
async function approvedToPermit2(choice: Authorizable, payer: Address): Promise<Authorizable | string> {
  if (choice.method !== "permit2") return choice;
  const allowed = await onChain(choice.chainId, (client) =>
    client.readContract({ address: choice.asset, abi: erc20Abi, functionName: "allowance", args: [payer, PERMIT2] }),
  );
  if (allowed >= choice.amount) return choice;
  const names = await assetNames(choice.chainId, choice.asset);
  const units = (amount: bigint) => `${formatUnits(amount, names.decimals)} ${names.symbol}`;
  return (
    `chain ${choice.chainId} by permit2, but this wallet lets Permit2 (${PERMIT2}) take ${units(allowed)}, ` +
    `not the ${units(choice.amount)} asked: the person approves Permit2 first (a send_transaction ` +
    "calling approve on the token), or the resource offers eip3009"
  );
}

/** The address of a wallet the grant lets pay (checked before). */
export function payerOf(agent: AgentContext, credentialId: string): Address {
  return getAddress(agent.credentials.find((entry) => entry.credentialId === credentialId)!.address);
}

/** The cheapest entry payable by one signature, or a refusal saying why each entry cannot be paid. */
export async function oneTapChoice(required: PaymentRequired, payer: Address): Promise<Authorizable> {
  const configured = config().chains.map((chain) => chain.id);
  const judged = required.accepts.map((offer) => judgeAuthorizable(offer, configured));
  return cheapest(await Promise.all(judged.map((entry) => (typeof entry === "string" ? entry : approvedToPermit2(entry, payer)))));
}

/** What the payer signs for `choice`, and the payment's payload but for its signature, valid until `validBefore`. */
export function toSign(
  choice: Authorizable,
  from: Address,
  validBefore: number,
): { typedData: ToolInput<"sign_typed_data">["typed_data"]; payload: AuthorizationPayload | Permit2Payload } {
  if (choice.method === "permit2") {
    // Permit2's nonces are a bitmap: a random one is unused (as @x402/evm's client draws it).
    const nonce = hexToBigInt(toHex(randomBytes(32)));
    const typedData = x402Permit2TypedData({
      chainId: choice.chainId,
      token: choice.asset,
      amount: choice.amount,
      payee: choice.payee,
      nonce,
      deadline: BigInt(validBefore),
    });
    return { typedData, payload: { permit2Authorization: { from, ...typedData.message } } };
  }
  // Valid at once (validAfter 0), as @x402/evm's client.
  const authorization = { from, to: choice.payee, value: choice.amount.toString(), validAfter: "0", validBefore: String(validBefore) };
  const message = { ...authorization, nonce: toHex(randomBytes(32)) };
  return {
    typedData: {
      domain: { name: choice.name, version: choice.version, chainId: choice.chainId, verifyingContract: choice.asset },
      types: { TransferWithAuthorization: [...TRANSFER_WITH_AUTHORIZATION] },
      primaryType: "TransferWithAuthorization",
      message,
    },
    payload: { authorization: message },
  };
}

/**
 * A pending request for the person to approve the cheapest entry payable by one signature (or `asked.choice`, with
 * why the credential's allowance did not pay it), or a refusal saying why each entry cannot be paid (before anything
 * is created). The answer names the request; its `header` and `value` come with get_request once the person approved.
 * With an idempotency key the answer is stored with the request, for a retry.
 */
export async function payWithOneTap(
  agent: AgentContext,
  credentialId: string,
  required: PaymentRequired,
  clock: Clock = systemClock,
  asked?: { choice: Authorizable; reason: string },
  idempotency?: Idempotency,
): Promise<ToolOutput<"pay_x402">> {
  const from = payerOf(agent, credentialId);
  const choice = asked?.choice ?? (await oneTapChoice(required, from));
  // The person has the request's lifetime to approve, and the payee the entry's timeout after that: a window fixed
  // now, since the passkey approves exactly the typed data shown.
  const validBefore = Math.floor(clock().getTime() / 1000) + REQUEST_TTL_SECONDS + choice.offer.maxTimeoutSeconds;
  const { typedData, payload } = toSign(choice, from, validBefore);
  const terms = await paymentTerms(required, choice, validBefore);
  const answer = (requestId: string): ToolOutput<"pay_x402"> => ({
    header: null,
    value: null,
    payment_id: requestId,
    request_id: requestId,
    approval_url: approvalUrl(requestId),
    ...terms,
    allowance_id: null,
  });
  const view = await createRequest(
    agent,
    { kind: "sign_typed_data", credential_id: credentialId, typed_data: typedData },
    {
      x402: unsignedPayment(required, choice.offer, payload),
      ...(asked && { reason: asked.reason }),
      ...(idempotency && { idempotency: { ...idempotency, answer } }),
    },
    clock,
  );
  return answer(view.request_id);
}
