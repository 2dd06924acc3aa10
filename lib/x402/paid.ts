// A payment pay_x402 signed within an allowance with no tap, as its request's page shows it: the request row holds
// the plain transfer the hold counts against the policy (pay.ts holdAndSign), and the audit event recorded with it
// says what it paid for; the X402Payment row says whether the merchant's facilitator has settled it since.
import { formatUnits, getAddress, type Address } from "viem";
import { parseAuditData } from "@/lib/audit/query";
import { db } from "@/lib/db";
import { escapedText } from "@/lib/text/visible-text";
import type { ContactNames } from "@/lib/wallet/address-book";
import { tokenMetadata } from "@/lib/wallet/token-metadata";
import { resourceParts } from "./requirement";

/** How long the page waits for the token's symbol and decimals; unread, the amount shows in base units. */
const TOKEN_READ_MS = 1000;

export type PaidWithoutTap = {
  /** "0.2 USDC" (base units and the token's address when it could not be read) */
  amount: string;
  payee: Address;
  resource: { url: string; host: string; path: string } | { url: string; host: null; path: null };
  allowanceId: string;
  /** the allowance's agent account that signed it (a stock merchant's payment, funded by the request's transaction) */
  agentAccount: Address | null;
  /** held: signed, not settled yet (until `expiresAt`); settled: on chain; expired: never settled, released */
  status: "held" | "settled" | "expired";
  expiresAt: Date | null;
};

/** An x402 payment's audit event, as the payment path records it (account.ts, pay.ts), or null for any other. */
function recordedPayment(data: Record<string, unknown>) {
  if (data.kind !== "x402" || typeof data.resource !== "string" || typeof data.recipient !== "string") return null;
  const recorded = /^(\d+) of token (0x[0-9a-fA-F]{40})$/.exec(String(data.amount));
  if (!recorded) return null;
  return {
    baseUnits: BigInt(recorded[1]),
    token: getAddress(recorded[2]),
    resource: data.resource,
    payee: getAddress(data.recipient),
    allowanceId: String(data.allowanceId),
    paymentId: typeof data.paymentId === "string" ? data.paymentId : null,
    agentAccount: typeof data.from === "string" ? getAddress(data.from) : null,
  };
}

/** The x402 payments among `requestIds` of `userId`, each by its request: the events their payments recorded. */
async function recordedPayments(userId: string, requestIds: string[]) {
  // A funding from the agent's account records its transfer's event beside the payment's: only the payment's counts.
  const events = await db().auditEvent.findMany({
    where: { userId, requestId: { in: requestIds }, type: "allowance.spent" },
    select: { requestId: true, data: true },
  });
  const found = new Map<string, NonNullable<ReturnType<typeof recordedPayment>>>();
  for (const event of events) {
    const payment = recordedPayment(parseAuditData(event.data));
    if (payment && event.requestId) found.set(event.requestId, payment);
  }
  return found;
}

/** The no-tap x402 payment a request of `userId` is, or null when it is none. */
export async function paidWithoutTap(userId: string, requestId: string, chainId: number): Promise<PaidWithoutTap | null> {
  const recorded = (await recordedPayments(userId, [requestId])).get(requestId);
  if (!recorded) return null;
  const [amount, payment] = await Promise.all([
    amountText(chainId, recorded.token, recorded.baseUnits),
    recorded.paymentId
      ? db().x402Payment.findUnique({ where: { id: recorded.paymentId }, select: { status: true, expiresAt: true } })
      : null,
  ]);
  return {
    amount,
    payee: recorded.payee,
    resource: resourceOf(recorded.resource),
    allowanceId: recorded.allowanceId,
    agentAccount: recorded.agentAccount,
    status: payment?.status === "settled" || payment?.status === "expired" ? payment.status : "held",
    expiresAt: payment?.expiresAt ?? null,
  };
}

/** The resource's URL with its host apart from its path, as the merchant claims it (a URL always, at signing). */
function resourceOf(url: string): PaidWithoutTap["resource"] {
  const parts = resourceParts(url);
  return parts ? { url, ...parts } : { url, host: null, path: null };
}

/** "0.2 USDC", or base units and the token's address when its symbol and decimals could not be read in time. */
async function amountText(chainId: number, token: Address, baseUnits: bigint): Promise<string> {
  const metadata = await tokenMetadata(chainId, token, TOKEN_READ_MS);
  return metadata.standard === "erc20"
    ? `${formatUnits(baseUnits, metadata.decimals)} ${metadata.symbol}`
    : `${baseUnits} base units of the token ${token}`;
}

/** A no-tap payment in one sentence, as its page opens with it and the queue lists it. */
export function paidHeadline(paid: Pick<PaidWithoutTap, "amount" | "payee" | "resource">, names: ContactNames): string {
  return escapedText(
    `Paid ${paid.amount} to ${names[paid.payee.toLowerCase()] ?? paid.payee} for ${paid.resource.host ?? paid.resource.url}`,
  );
}

/**
 * The queue's sentence for each completed request of `userId` that is a no-tap x402 payment (by request id): the
 * payment it made, never the transfer that held or funded it.
 */
export async function paidHeadlines(
  userId: string,
  requests: { id: string; chainId: number | null }[],
  names: ContactNames,
): Promise<Map<string, string>> {
  if (!requests.length) return new Map();
  const recorded = await recordedPayments(
    userId,
    requests.map((request) => request.id),
  );
  const headlines = await Promise.all(
    requests.flatMap(({ id, chainId }) => {
      const payment = recorded.get(id);
      if (!payment || chainId === null) return [];
      return [
        amountText(chainId, payment.token, payment.baseUnits).then(
          (amount) => [id, paidHeadline({ amount, payee: payment.payee, resource: resourceOf(payment.resource) }, names)] as const,
        ),
      ];
    }),
  );
  return new Map(headlines);
}
