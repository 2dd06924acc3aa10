// A payment pay_x402 signed within an allowance with no tap, as its request's page shows it: the request row holds
// the plain transfer the hold counts against the policy (pay.ts holdAndSign), and the audit event recorded with it
// says what it paid for; the X402Payment row says whether the merchant's facilitator has settled it since.
import { formatUnits, getAddress, type Address } from "viem";
import { parseAuditData } from "@/lib/audit/query";
import { db } from "@/lib/db";
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
  /** held: signed, not settled yet (until `expiresAt`); settled: on chain; expired: never settled, released */
  status: "held" | "settled" | "expired";
  expiresAt: Date | null;
};

/** The no-tap x402 payment a request of `userId` is, or null when it is none. */
export async function paidWithoutTap(userId: string, requestId: string, chainId: number): Promise<PaidWithoutTap | null> {
  const event = await db().auditEvent.findFirst({ where: { userId, requestId, type: "allowance.spent" }, select: { data: true } });
  if (!event) return null;
  const data = parseAuditData(event.data);
  if (data.kind !== "x402" || typeof data.resource !== "string" || typeof data.recipient !== "string") return null;
  const recorded = /^(\d+) of token (0x[0-9a-fA-F]{40})$/.exec(String(data.amount));
  if (!recorded) return null;
  const [, baseUnits, token] = recorded;
  const [metadata, payment] = await Promise.all([
    tokenMetadata(chainId, getAddress(token), TOKEN_READ_MS),
    typeof data.paymentId === "string"
      ? db().x402Payment.findUnique({ where: { id: data.paymentId }, select: { status: true, expiresAt: true } })
      : null,
  ]);
  const parts = resourceParts(data.resource);
  return {
    amount:
      metadata.standard === "erc20"
        ? `${formatUnits(BigInt(baseUnits), metadata.decimals)} ${metadata.symbol}`
        : `${baseUnits} base units of the token ${getAddress(token)}`,
    payee: getAddress(data.recipient),
    resource: parts ? { url: data.resource, ...parts } : { url: data.resource, host: null, path: null },
    allowanceId: String(data.allowanceId),
    status: payment?.status === "settled" || payment?.status === "expired" ? payment.status : "held",
    expiresAt: payment?.expiresAt ?? null,
  };
}
