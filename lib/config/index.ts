import ipaddr from "ipaddr.js";
import { z } from "zod";
import { databaseUrl, dataDir } from "./database";
import { base64urlSecret, loadOrCreateSecrets, SECRET_FORM } from "./secrets";
import { isLoopbackHostname } from "@/lib/http/loopback";

/** An EVM address, as any case; kept lowercase so that lookups do not depend on a checksum. */
const evmAddress = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be an address: 0x and 40 hexadecimal characters")
  .transform((value) => value.toLowerCase() as `0x${string}`);

/** A chain the wallet can read and send on (docs/product.md §3). */
export const chainSchema = z.object({
  id: z.number().int().positive(),
  name: z.string().min(1),
  rpcUrl: z.url({ protocol: /^https?$/ }),
  symbol: z.string().min(1).max(12),
  /** A block explorer's base URL; a sent transaction links to `{explorerUrl}/tx/{hash}`. */
  explorerUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** ERC-20s every wallet lists on this chain beside its coin, before any request names them. */
  tokens: z.array(evmAddress).optional(),
  /**
   * The chain charges a data fee for posting each transaction to L1 beside its gas, as OP-stack chains (Base, Optimism)
   * do: the relayer reads it from the chain's GasPriceOracle and counts it in the person's budget.
   */
  l1Fees: z.literal("op-stack").optional(),
});
export type Chain = z.infer<typeof chainSchema>;

/** Chainlink aggregators on one chain: the coin's price and each token's (by the token's address), in PRICE_CURRENCY. */
const chainFeeds = z.object({ native: evmAddress.optional(), tokens: z.record(evmAddress, evmAddress).default({}) }).strict();
type ChainFeeds = z.infer<typeof chainFeeds>;

/**
 * The local test chain `npm start` runs beside the app when no CHAINS is configured (test-chain/index.ts): which
 * chain it is, the node's unlocked account that gives test funds, and its test USDC.
 */
const testChain = z.object({ chainId: z.number().int().positive(), faucet: evmAddress, usdc: evmAddress }).strict();
export type TestChain = z.infer<typeof testChain>;

const DEFAULT_CHAINS: Chain[] = [{ id: 31337, name: "Local dev chain", rpcUrl: "http://127.0.0.1:8545", symbol: "ETH" }];

function parsedUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/**
 * An origin such as http://localhost:3000: scheme, host and port only, no trailing slash.
 * zod 4 runs refinements even after `z.url()` failed, so they must not assume a valid URL.
 */
const origin = z
  .url({ protocol: /^https?$/ })
  .refine((value) => {
    const url = parsedUrl(value);
    return !url || (url.pathname === "/" && !url.search && !url.hash && !url.username && !url.password);
  }, "must be an origin, without path, query, fragment or user information")
  .transform((value) => new URL(value).origin);

/** A comma-separated list, blanks dropped. */
const commaList = z.string().transform((value) =>
  value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean),
);

/** `kid:secret` pairs separated by commas; the first signs, all verify. */
const signingKeys = commaList.pipe(
  z
    .array(
      z.string().transform((pair, context) => {
        const [, kid, given] = /^([A-Za-z0-9_-]{1,64}):(.*)$/.exec(pair) ?? [];
        const secret = given === undefined ? null : base64urlSecret(given);
        if (secret) return { kid, secret };
        context.addIssue({ code: "custom", message: `each key must be kid:secret with ${SECRET_FORM}` });
        return z.NEVER;
      }),
    )
    .min(1),
);

/** A rate limit: `<points>/<window>`, the window in seconds, minutes or hours (`300/1m`, `30/1h`). */
const rateRule = z
  .string()
  .regex(/^\d+\/\d+[smh]$/, "must be <requests>/<window>, e.g. 300/1m (window in s, m or h)")
  .transform((value) => {
    const [points, window] = value.split("/");
    const unit = { s: 1, m: 60, h: 3600 }[window.slice(-1) as "s" | "m" | "h"];
    return { points: Number(points), seconds: Number(window.slice(0, -1)) * unit };
  })
  .refine((rule) => rule.points >= 1 && rule.seconds >= 1, "needs at least 1 request in a window of at least 1 s");

export type RateRule = z.infer<typeof rateRule>;

/** The named ranges TRUSTED_PROXIES accepts, as CIDRs (the names proxy-addr and Express use). */
const NAMED_RANGES = new Map([
  ["loopback", ["127.0.0.0/8", "::1/128"]],
  ["linklocal", ["169.254.0.0/16", "fe80::/10"]],
  ["uniquelocal", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"]],
]);

/** An address (a range of one) or a CIDR, written plainly: IPv4 only in four decimal parts. */
function asCidr(entry: string): string[] | null {
  const [address, prefix, ...rest] = entry.split("/");
  const ipv4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  if (rest.length || !(ipv4 || ipaddr.IPv6.isValid(address))) return null;
  const cidr = `${address}/${prefix ?? (ipv4 ? 32 : 128)}`;
  return /^\d+$/.test(prefix ?? "0") && ipaddr.isValidCIDR(cidr) ? [cidr] : null;
}

/**
 * Which peers may speak for the client in X-Forwarded-For: a number of proxies in front (each appends the address it
 * saw), or the proxies' addresses — IPs, CIDRs, `loopback`, `linklocal`, `uniquelocal` — as CIDRs.
 */
const trustedProxies = commaList.transform((entries, ctx): number | string[] => {
  if (entries.length === 1 && /^\d+$/.test(entries[0])) {
    const count = Number(entries[0]);
    if (count <= 10) return count;
    ctx.addIssue({ code: "custom", message: "may count at most 10 proxies" });
    return z.NEVER;
  }
  const ranges: string[] = [];
  for (const entry of entries) {
    const cidr = NAMED_RANGES.get(entry) ?? asCidr(entry);
    if (cidr) ranges.push(...cidr);
    else
      ctx.addIssue({ code: "custom", message: `${entry} is no number of proxies, IP address, CIDR, loopback, linklocal or uniquelocal` });
  }
  if (!entries.length) ctx.addIssue({ code: "custom", message: "must be a number of proxies or list their addresses" });
  return ranges;
});

/** A setting written as JSON; `expected` says what it must be when it is not JSON at all. */
const jsonText = (expected: string) =>
  z.string().transform((value, ctx) => {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: expected });
      return z.NEVER;
    }
  });

const PREFIX_LENGTH = "must be a prefix length: a whole number from 1 to 128";
/** An IPv6 prefix length: how many leading bits name a network. */
const ipv6PrefixLength = z.coerce.number({ error: PREFIX_LENGTH }).int(PREFIX_LENGTH).min(1, PREFIX_LENGTH).max(128, PREFIX_LENGTH);

/** A duration in whole seconds, at least 1. */
const seconds = z.coerce.number().int("must be whole seconds").min(1, "must be at least 1 second");

const envSchema = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("production"),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    // Unset, both are http://localhost:{PORT}: the port alone moves the whole app.
    BASE_URL: origin.optional(),
    APP_URL: origin.optional(),
    DATA_DIR: z.string().min(1).optional(),
    DATABASE_URL: z
      .string()
      .regex(/^(file:|postgres(ql)?:\/\/)/, "must be file:<path> (SQLite) or postgresql://…")
      .optional(),
    JWT_SIGNING_KEYS: signingKeys.optional(),
    SESSION_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
    // Development and tests only: fetch client metadata documents from loopback and private hosts, over http too.
    CLIENT_METADATA_ALLOW_PRIVATE_HOSTS: z
      .enum(["true", "false"], { error: "must be true or false" })
      .default("false")
      .transform((value) => value === "true"),
    MCP_ALLOWED_ORIGINS: commaList.pipe(z.array(origin).min(1, "must list at least one origin")).optional(),
    RATE_LIMIT_REGISTER_PER_IP: rateRule.prefault("300/1h"),
    RATE_LIMIT_OAUTH_PER_IP: rateRule.prefault("300/1m"),
    RATE_LIMIT_OAUTH_PER_CLIENT: rateRule.prefault("300/1m"),
    RATE_LIMIT_MCP_PER_IP: rateRule.prefault("6000/1m"),
    RATE_LIMIT_MCP_PER_CLIENT: rateRule.prefault("1200/1m"),
    RATE_LIMIT_ACCOUNT_PER_IP: rateRule.prefault("60/1m"),
    RATE_LIMIT_APPROVALS_PER_PERSON: rateRule.prefault("30/1m"),
    // Revocations a person asks the relayer to send, which it pays for (lib/allowances/revocation.ts).
    RATE_LIMIT_REVOCATIONS_PER_PERSON: rateRule.prefault("30/1h"),
    // Each lookup of a contract a form names costs the chain up to five reads (lib/wallet/token-metadata.ts).
    RATE_LIMIT_TOKEN_LOOKUPS_PER_PERSON: rateRule.prefault("60/1m"),
    // Fetches of client metadata documents per host, whoever asks (lib/oauth/client-metadata-document.ts).
    RATE_LIMIT_CLIENT_METADATA_PER_HOST: rateRule.prefault("30/1m"),
    // Per-address limits count an IPv6 client by its network of this many bits: a host commonly holds a whole /64.
    RATE_LIMIT_IPV6_PREFIX: ipv6PrefixLength.default(64),
    // Reverse proxies in front that append the peer's address to X-Forwarded-For (docs/operations.md).
    TRUSTED_PROXIES: trustedProxies.default(0),
    // The production server's limits on slow and idle clients (server.ts, docs/operations.md).
    HTTP_HEADERS_TIMEOUT_SECONDS: seconds.default(15),
    HTTP_REQUEST_TIMEOUT_SECONDS: seconds.default(30),
    HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: seconds.default(5),
    HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1, "must be at least 1").default(1000),
    REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
    UNUSED_CLIENT_RETENTION_HOURS: z.coerce.number().positive().default(24),
    PENDING_REQUESTS_PER_CREDENTIAL: z.coerce.number().int().min(1).default(50),
    // How often an allowance's stored revocation that did not land is sent again (lib/allowances/resend.ts).
    ALLOWANCE_REVOCATION_RETRY_SECONDS: seconds.default(60),
    CHAINS: jsonText("must be a JSON array of chains").pipe(z.array(chainSchema).min(1)).optional(),
    // The Delegation Framework's addresses per chain id, for chains its published deployments do not list (allowances).
    ALLOWANCE_FRAMEWORKS: jsonText("must be a JSON object keyed by chain id")
      .pipe(z.record(z.string().regex(/^\d+$/, "keys must be chain ids"), z.record(z.string(), z.unknown())))
      .default({}),
    // Chainlink price feeds per chain id (docs/decisions/0018-balances-and-prices.md); none: no value in money is shown.
    PRICE_FEEDS: jsonText("must be a JSON object keyed by chain id")
      .pipe(z.record(z.string().regex(/^\d+$/, "keys must be chain ids"), chainFeeds))
      .default({}),
    PRICE_CURRENCY: z
      .string()
      .regex(/^[A-Z]{3}$/, "must be an ISO 4217 currency code such as USD")
      .default("USD"),
    PRICE_MAX_AGE_SECONDS: seconds.default(3600),
    TEST_CHAIN: jsonText("must be a JSON object").pipe(testChain).optional(),
  })
  .superRefine((values, ctx) => {
    if (values.HTTP_HEADERS_TIMEOUT_SECONDS > values.HTTP_REQUEST_TIMEOUT_SECONDS)
      ctx.addIssue({
        code: "custom",
        path: ["HTTP_HEADERS_TIMEOUT_SECONDS"],
        message: "must not exceed HTTP_REQUEST_TIMEOUT_SECONDS (the headers are part of the request)",
      });
    const chainIds = (values.CHAINS ?? DEFAULT_CHAINS).map((chain) => String(chain.id));
    for (const chainId of Object.keys(values.PRICE_FEEDS)) {
      if (!chainIds.includes(chainId))
        ctx.addIssue({ code: "custom", path: ["PRICE_FEEDS"], message: `names chain ${chainId}, which CHAINS does not configure` });
    }
    if (values.TEST_CHAIN && !chainIds.includes(String(values.TEST_CHAIN.chainId)))
      ctx.addIssue({
        code: "custom",
        path: ["TEST_CHAIN"],
        message: `names chain ${values.TEST_CHAIN.chainId}, which CHAINS does not configure`,
      });
    // In production the session cookie, passkeys and tokens must not travel in the clear; loopback is this machine.
    if (values.NODE_ENV !== "production") return;
    for (const key of ["BASE_URL", "APP_URL"] as const) {
      const url = parsedUrl(values[key] ?? "");
      if (url?.protocol === "http:" && !isLoopbackHostname(url.hostname)) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: "must be https in production (plain http only for localhost, 127.0.0.1 or [::1])",
        });
      }
    }
  });

export type Config = {
  port: number;
  baseUrl: string;
  appUrl: string;
  /** The MCP resource identifier: {BASE_URL}/mcp. */
  mcpResource: string;
  dataDir: string;
  databaseUrl: string;
  jwtKeys: { kid: string; secret: string }[];
  sessionSecret: string;
  chains: Chain[];
  /** Origins whose browser pages may call /mcp (DNS-rebinding protection); default BASE_URL's and APP_URL's. */
  mcpAllowedOrigins: string[];
  /** Development and tests only: client metadata documents may come from loopback and private hosts, and over http. */
  clientMetadataAllowPrivateHosts: boolean;
  /** WebAuthn relying party: the app origin and its host. */
  rpId: string;
  /** Rate limits per route and key (lib/limits). */
  rateLimits: {
    registerPerIp: RateRule;
    oauthPerIp: RateRule;
    oauthPerClient: RateRule;
    mcpPerIp: RateRule;
    mcpPerClient: RateRule;
    accountPerIp: RateRule;
    approvalsPerPerson: RateRule;
    revocationsPerPerson: RateRule;
    tokenLookupsPerPerson: RateRule;
    clientMetadataPerHost: RateRule;
  };
  /** Per-address limits count an IPv6 address by its first this many bits (lib/limits/client-ip.ts); IPv4 by itself. */
  rateLimitIpv6Prefix: number;
  /**
   * Who may speak for the client in X-Forwarded-For (lib/limits/client-ip.ts): how many proxies in front append to
   * it, or the CIDRs of the proxies' addresses. 0: nobody, the connection's address counts.
   */
  trustedProxies: number | string[];
  /** The production server's limits on slow and idle clients (server.ts). */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; maxConnections: number };
  /** Rate-limit counters live here when set, else in the database. */
  redisUrl: string | null;
  /** Dynamically registered clients that never got a grant are swept this long after registration. */
  unusedClientRetentionMs: number;
  /** How many of a grant's requests on one credential may wait for the person at once (lib/wallet/policy.ts). */
  pendingRequestsPerCredential: number;
  /**
   * An allowance stopped here whose stored revocation the chain has not confirmed is sent again this long after the
   * last send; every server process looks for such allowances this often.
   */
  revocationRetryMs: number;
  /** Values in money (lib/prices): Chainlink feeds per chain id, their currency, and how old an answer may be. */
  prices: { feeds: Record<string, ChainFeeds>; currency: string; maxAgeSeconds: number };
  /** The Delegation Framework on chains its published deployments do not list: chain id → its addresses. */
  allowanceFrameworks: Record<string, Record<string, unknown>>;
  /** The local test chain npm start brought up, the one chain where the app gives test funds; null: none. */
  testChain: TestChain | null;
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Validates the environment; a bad value throws a ConfigError naming the variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = envSchema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `${issue.path.join(".") || "environment"}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const values = result.data;
  const localOrigin = `http://localhost:${values.PORT}`;
  const baseUrl = values.BASE_URL ?? localOrigin;
  const appUrl = values.APP_URL ?? localOrigin;
  const dir = dataDir(env);
  const secrets =
    values.JWT_SIGNING_KEYS && values.SESSION_SECRET
      ? { jwtKeys: values.JWT_SIGNING_KEYS, sessionSecret: values.SESSION_SECRET }
      : loadOrCreateSecrets(dir);
  return {
    port: values.PORT,
    baseUrl,
    appUrl,
    mcpResource: `${baseUrl}/mcp`,
    dataDir: dir,
    databaseUrl: databaseUrl(env),
    jwtKeys: values.JWT_SIGNING_KEYS ?? secrets.jwtKeys,
    sessionSecret: values.SESSION_SECRET ?? secrets.sessionSecret,
    chains: values.CHAINS ?? DEFAULT_CHAINS,
    mcpAllowedOrigins: values.MCP_ALLOWED_ORIGINS ?? [...new Set([baseUrl, appUrl])],
    clientMetadataAllowPrivateHosts: values.CLIENT_METADATA_ALLOW_PRIVATE_HOSTS,
    rpId: new URL(appUrl).hostname,
    rateLimits: {
      registerPerIp: values.RATE_LIMIT_REGISTER_PER_IP,
      oauthPerIp: values.RATE_LIMIT_OAUTH_PER_IP,
      oauthPerClient: values.RATE_LIMIT_OAUTH_PER_CLIENT,
      mcpPerIp: values.RATE_LIMIT_MCP_PER_IP,
      mcpPerClient: values.RATE_LIMIT_MCP_PER_CLIENT,
      accountPerIp: values.RATE_LIMIT_ACCOUNT_PER_IP,
      approvalsPerPerson: values.RATE_LIMIT_APPROVALS_PER_PERSON,
      revocationsPerPerson: values.RATE_LIMIT_REVOCATIONS_PER_PERSON,
      tokenLookupsPerPerson: values.RATE_LIMIT_TOKEN_LOOKUPS_PER_PERSON,
      clientMetadataPerHost: values.RATE_LIMIT_CLIENT_METADATA_PER_HOST,
    },
    rateLimitIpv6Prefix: values.RATE_LIMIT_IPV6_PREFIX,
    trustedProxies: values.TRUSTED_PROXIES,
    http: {
      headersTimeoutMs: values.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: values.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
      keepAliveTimeoutMs: values.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
      maxConnections: values.HTTP_MAX_CONNECTIONS,
    },
    redisUrl: values.REDIS_URL ?? null,
    unusedClientRetentionMs: values.UNUSED_CLIENT_RETENTION_HOURS * 3_600_000,
    pendingRequestsPerCredential: values.PENDING_REQUESTS_PER_CREDENTIAL,
    revocationRetryMs: values.ALLOWANCE_REVOCATION_RETRY_SECONDS * 1000,
    prices: { feeds: values.PRICE_FEEDS, currency: values.PRICE_CURRENCY, maxAgeSeconds: values.PRICE_MAX_AGE_SECONDS },
    allowanceFrameworks: values.ALLOWANCE_FRAMEWORKS,
    testChain: values.TEST_CHAIN ?? null,
  };
}

let cached: Config | undefined;

/** The process's configuration, read once from the environment. */
export function config(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}
