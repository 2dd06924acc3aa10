// A request in one sentence, as its approval page opens with it, the queue lists it, a notification says it and the
// audit log records the person's decision on it. Pure.
import { formatEther, type Address } from "viem";
import { utcDateTime } from "@/lib/clock";
import { escapedText } from "@/lib/text/visible-text";
import type { ContactNames } from "./address-book";
import type { Described, Detail, Executions, RequestDescription } from "./request-description";

/** An amount a request names, in its asset's units ("0.1 ETH"): the chain's coin (token null) or an ERC-20. */
export type NamedAmount = { chainId: number; token: Address | null; amount: bigint; decimals: number; units: string };

/** An address as a person reads it at a glance: their name for it, or its start and end. */
function shortAddress(address: string, names: ContactNames): string {
  return names[address.toLowerCase()] ?? `${address.slice(0, 6)}…${address.slice(-4)}`;
}

const COUNTERPARTY: Record<string, string> = { Recipient: "to", Spender: "for", Operator: "for", Delegate: "to" };

/** A decoded call's or permit's action with whom it benefits: "Transfer 5 USDC to Alice". */
function actionWithParty(described: Described, names: ContactNames): string {
  const party = described.details.find((detail) => detail.address && COUNTERPARTY[detail.label]);
  return party?.address ? `${described.action} ${COUNTERPARTY[party.label]} ${shortAddress(party.address, names)}` : described.action;
}

/** Whose account runs a DeleGator's calls: the wallet's own, or a delegator's through the delegations redeemed. */
export function runLabel(run: Executions["runs"][number], names: ContactNames): string {
  if (!run.delegator) return "Run from your wallet";
  return `Run from ${shortAddress(run.delegator, names)}'s account, by ${run.delegations} delegation${run.delegations === 1 ? "" : "s"}`;
}

/** What the DeleGator would run, in one sentence: "Run from your wallet: Send 0.01 ETH to 0xbeef…0001". */
function executionsText(executions: Executions, names: ContactNames): string {
  if (executions.unreadable) return "Run calls from your wallet that cannot be read";
  return executions.runs
    .map((run) => `${runLabel(run, names)}: ${run.calls.map((call) => actionWithParty(call, names)).join("; ") || "nothing"}`)
    .join(" · ");
}

/**
 * What approving does, in one sentence ("Send 0.05 ETH to Alice on Base"). Derived from the same description
 * as the details below it, which show every address in full; the queue and its notifications use it too.
 */
export function headlineOf(description: RequestDescription, credentialName: string, names: ContactNames): string {
  switch (description.kind) {
    case "sign_message":
      return description.signIn
        ? `Sign in to ${description.signIn.domain} with ${credentialName}`
        : `Sign a message with ${credentialName}`;
    case "sign_typed_data": {
      // An x402 payment: its amount and payee as signed, and the resource it pays for (whose address is the agent's
      // to give: hidden characters in it are shown).
      if (description.payment) {
        const { amount, payee, resource } = description.payment;
        return escapedText(`Pay ${amount} to ${shortAddress(payee, names)} for ${resource.url}`);
      }
      const granted = description.permit ?? description.delegation;
      if (granted) return `${actionWithParty(granted, names)} — by signature, no transaction`;
      if (description.operation) return `${executionsText(description.operation, names)} — by signature, as a user operation`;
      const app = description.domain.find((field) => field.name === "name");
      // The app's name is the requester's to choose: hidden characters in it are shown, in a list as on the page.
      const claim = app && "value" in app ? ` for an app that calls itself “${app.value}”` : "";
      return escapedText(`Sign ${description.primaryType} data with ${credentialName}${claim}`);
    }
    case "send_transaction": {
      const { chain, transaction, call } = description;
      const value = BigInt(transaction.value);
      const native = `${formatEther(value)} ${chain.symbol}`;
      const to = shortAddress(transaction.to, names);
      if (call.kind === "none") return `Send ${native} to ${to} on ${chain.name}`;
      const withValue = value === 0n ? "" : `, sending ${native} with it`;
      if (call.kind === "unknown") return `Call an unknown function of ${to} on ${chain.name}${withValue}`;
      if (call.kind === "executions") return `${executionsText(call, names)} on ${chain.name}${withValue}`;
      return `${actionWithParty(call, names)} on ${chain.name}${withValue}`;
    }
    case "request_allowance":
      return askedAllowanceHeadline(description, credentialName, names);
  }
}

/** "Give Main an allowance for the agent's own key on Base: 5 USDC a day to Alice, 10 payments in all, until …". */
function askedAllowanceHeadline(
  { chain, allowance }: Extract<RequestDescription, { kind: "request_allowance" }>,
  credentialName: string,
  names: ContactNames,
): string {
  const assets = [
    ...(allowance.coin === undefined ? [] : [`${allowance.coin} ${chain.symbol}`]),
    ...allowance.tokens.map((token) => `${token.amount} ${token.symbol}`),
  ].join(" and ");
  const to = allowance.anyPayee ? "any payee" : allowance.recipients.map((recipient) => shortAddress(recipient, names)).join(", ");
  const payments = `${allowance.transactions} payment${allowance.transactions === 1 ? "" : "s"} in all`;
  return escapedText(
    `Give ${credentialName} an allowance for the agent's own key on ${chain.name}: ${assets} a ${allowance.period} to ${to}, ` +
      `${payments}, until ${utcDateTime(new Date(allowance.expiresAt * 1000))}`,
  );
}

/** The details of every call a DeleGator runs. */
const runDetails = (run: Executions["runs"][number]) => run.calls.flatMap((call) => call.details);

/** The token amounts of a call's or permit's details, in the units its page shows them. */
function detailAmounts(details: Detail[]): NamedAmount[] {
  return details.flatMap(({ value, text }) =>
    value && text
      ? [{ chainId: value.chainId, token: value.token, amount: BigInt(value.amount), decimals: value.decimals, units: text }]
      : [],
  );
}

/** The amounts a request's headline names, to be valued where it is listed: the tokens it moves, then the coin it sends. */
export function headlineAmounts(description: RequestDescription): NamedAmount[] {
  switch (description.kind) {
    case "sign_message":
      return [];
    case "sign_typed_data":
      return detailAmounts(description.permit?.details ?? description.operation?.runs.flatMap(runDetails) ?? []);
    case "send_transaction": {
      const { chain, transaction, call } = description;
      const value = BigInt(transaction.value);
      const coin =
        value === 0n
          ? []
          : [{ chainId: chain.id, token: null, amount: value, decimals: 18, units: `${formatEther(value)} ${chain.symbol}` }];
      const details = call.kind === "decoded" ? call.details : call.kind === "executions" ? call.runs.flatMap(runDetails) : [];
      return [...detailAmounts(details), ...coin];
    }
    case "request_allowance":
      // caps, not payments: valued on the allowance's card, not as amounts that move now
      return [];
  }
}
