// An x402 payment requirement as the resource gave it: the V2 `PAYMENT-REQUIRED` header's value (base64 JSON) or a
// V1 402 body (JSON), read strictly into one shape. Nothing in it is trusted: it only says what the payee asks for,
// and the choice of what to pay (choose.ts) and the allowance decide what is signed.
import { z } from "zod";
import { safeBase64Decode } from "@x402/core/utils";
import type { Network, PaymentRequirements, ResourceInfo } from "@x402/core/types";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { AppError } from "@/lib/http/errors";

/** A requirement Agent Wallet cannot read: nothing was chosen or signed. */
export class X402RequirementError extends AppError {
  constructor(message: string) {
    super("invalid_payment_required", message, 400);
  }
}

/**
 * A resource's URL as people read it: its host (with any port) apart from its path (and query). Both are the
 * merchant's claim, nothing Agent Wallet checked. Null for what is no URL naming a host (an http(s) resource, or a paid
 * MCP tool's `mcp://server/tools/name`).
 */
export function resourceParts(url: string): { host: string; path: string } | null {
  if (!URL.canParse(url)) return null;
  const parsed = new URL(url);
  if (!parsed.host) return null;
  return { host: parsed.host, path: `${parsed.pathname}${parsed.search}` };
}

// What a payment is for is a resource's address: one that is no URL cannot be shown to anyone as what they pay for.
const resourceUrl = z
  .string()
  .min(1)
  .refine((url) => resourceParts(url) !== null, "must be the resource's URL (such as https://host/path)");

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address");
const atomicAmount = z
  .string()
  .regex(/^[0-9]{1,78}$/, "must be an amount in the asset's smallest unit, as a decimal string")
  // what no token can move (a uint256), refused here rather than failing when the payment is encoded
  .refine((amount) => !/^[0-9]+$/.test(amount) || BigInt(amount) < 2n ** 256n, "must be less than 2^256 (a token amount is a uint256)");
// Anything a payee adds (its own `extra`, extensions, an output schema) is kept as it is, never acted on.
const open = z.record(z.string(), z.unknown());
const timeout = z
  .number()
  .int()
  .positive()
  .max(24 * 3600, "must be at most a day");

const requirementV2 = z.strictObject({
  scheme: z.string().min(1),
  network: z.string().min(1),
  amount: atomicAmount,
  asset: address,
  payTo: address,
  maxTimeoutSeconds: timeout,
  extra: open.optional(),
});

const requiredV2 = z.strictObject({
  x402Version: z.literal(2),
  error: z.string().optional(),
  resource: z.strictObject({
    url: resourceUrl,
    description: z.string().optional(),
    mimeType: z.string().optional(),
    serviceName: z.string().optional(),
    tags: z.array(z.string()).optional(),
    iconUrl: z.string().optional(),
  }),
  accepts: z.array(requirementV2).min(1, "must offer at least one way to pay"),
  extensions: open.optional(),
});

const requirementV1 = z.strictObject({
  scheme: z.string().min(1),
  network: z.string().min(1),
  maxAmountRequired: atomicAmount,
  resource: resourceUrl,
  description: z.string(),
  mimeType: z.string(),
  outputSchema: open.nullable().optional(),
  payTo: address,
  maxTimeoutSeconds: timeout,
  asset: address,
  extra: open.nullable().optional(),
});

const requiredV1 = z.strictObject({
  x402Version: z.literal(1),
  error: z.string().optional(),
  accepts: z.array(requirementV1).min(1, "must offer at least one way to pay"),
});

/**
 * A V1 entry's network in V2's terms: V1 names EVM networks (`base-sepolia`), as @x402/evm's V1 table maps them to
 * chain ids; a CAIP-2 `eip155:<id>` (a local chain has no V1 name) and anything else are kept as they are.
 */
function networkOfV1(network: string): Network {
  const chainId = Object.hasOwn(EVM_NETWORK_CHAIN_ID_MAP, network)
    ? EVM_NETWORK_CHAIN_ID_MAP[network as keyof typeof EVM_NETWORK_CHAIN_ID_MAP]
    : null;
  return (chainId === null ? network : `eip155:${chainId}`) as Network;
}

/**
 * One way to pay, in V2's terms whichever version offered it (a V1 network named as CAIP-2); `offered` is the entry
 * exactly as the payee sent it.
 */
export type Offer = PaymentRequirements & { offered: Record<string, unknown> };

/** A requirement read: its version, the resource it is for, and the ways to pay it offers. */
export type PaymentRequired = {
  version: 1 | 2;
  resource: { url: string; description: string | null };
  /** V2: the resource object exactly as the payee sent it, repeated in the payment */
  resourceOffered?: ResourceInfo;
  accepts: Offer[];
};

function issues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "the requirement"} ${issue.message}`)
    .join("; ");
}

/** The JSON a requirement carries: the V1 body as is, or the V2 header's base64 decoded. */
function jsonOf(given: string): unknown {
  const text = given.trim();
  const decoded = text.startsWith("{") ? text : decodeBase64(text);
  try {
    return JSON.parse(decoded);
  } catch {
    throw new X402RequirementError("The payment requirement is neither a PAYMENT-REQUIRED header value nor a 402 body: not JSON.");
  }
}

function decodeBase64(text: string): string {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text))
    throw new X402RequirementError("The payment requirement is neither base64 (a PAYMENT-REQUIRED header value) nor JSON (a 402 body).");
  return safeBase64Decode(text.replace(/-/g, "+").replace(/_/g, "/"));
}

/** Reads `given` (a header value, or a body as text or as parsed JSON) into a PaymentRequired, or says what is wrong. */
export function parsePaymentRequired(given: unknown): PaymentRequired {
  const json = typeof given === "string" ? jsonOf(given) : given;
  const version = (json as { x402Version?: unknown } | null)?.x402Version;
  if (version === 2) {
    const parsed = requiredV2.safeParse(json);
    if (!parsed.success) throw new X402RequirementError(`This x402 V2 requirement is not valid: ${issues(parsed.error)}.`);
    const { resource, accepts } = parsed.data;
    return {
      version: 2,
      resource: { url: resource.url, description: resource.description ?? null },
      resourceOffered: resource as ResourceInfo,
      accepts: accepts.map((entry) => ({
        ...entry,
        network: entry.network as Network,
        extra: entry.extra ?? {},
        offered: entry,
      })),
    };
  }
  if (version === 1) {
    const parsed = requiredV1.safeParse(json);
    if (!parsed.success) throw new X402RequirementError(`This x402 V1 requirement is not valid: ${issues(parsed.error)}.`);
    const { accepts } = parsed.data;
    // V1 names the resource in each entry; they all describe the one resource that answered 402.
    return {
      version: 1,
      resource: { url: accepts[0].resource, description: accepts[0].description || null },
      accepts: accepts.map((entry) => ({
        scheme: entry.scheme,
        network: networkOfV1(entry.network),
        amount: entry.maxAmountRequired,
        asset: entry.asset,
        payTo: entry.payTo,
        maxTimeoutSeconds: entry.maxTimeoutSeconds,
        extra: entry.extra ?? {},
        offered: entry,
      })),
    };
  }
  throw new X402RequirementError("The payment requirement names no x402 version Agent Wallet reads (x402Version 1 or 2).");
}
