// Rate limits on the public surface and the account routes, counted in a store every instance shares (Redis
// when REDIS_URL is set, else the database), with rate-limiter-flexible. docs/operations.md lists them.
import { createHash } from "node:crypto";
import { Redis } from "ioredis";
import { LRUCache } from "lru-cache";
import { RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { config, type Config, type RateRule } from "@/lib/config";
import { RateLimitedError } from "@/lib/http/errors";
import { DatabaseRateLimitStore } from "./database-store";

type Rules = Config["rateLimits"];
type Keys = { ip?: string; client?: string; person?: string; host?: string };

/**
 * Each limited route and what it is counted by: the client's address, the OAuth client (or grant), the person; and
 * the fetches of client metadata documents, by the host they go to.
 */
const ROUTES = {
  register: { ip: "registerPerIp" },
  authorize: { ip: "oauthPerIp", client: "oauthPerClient" },
  token: { ip: "oauthPerIp", client: "oauthPerClient" },
  revoke: { ip: "oauthPerIp", client: "oauthPerClient" },
  deviceAuthorization: { ip: "oauthPerIp", client: "oauthPerClient" },
  mcp: { ip: "mcpPerIp", client: "mcpPerClient" },
  signIn: { ip: "accountPerIp" },
  signUp: { ip: "accountPerIp" },
  passkey: { ip: "accountPerIp" },
  approve: { ip: "accountPerIp", person: "approvalsPerPerson" },
  // A person typing a device's user code: counted apart from approvals, it keeps guessing codes slow.
  userCode: { ip: "accountPerIp", person: "approvalsPerPerson" },
  // A contract a form names, looked up on the chain (GET /api/tokens).
  tokens: { ip: "accountPerIp", person: "tokenLookupsPerPerson" },
  // A revocation the person signed, which the relayer sends and pays for.
  revocation: { person: "revocationsPerPerson" },
  clientMetadataFetch: { host: "clientMetadataPerHost" },
} as const satisfies Record<string, Partial<Record<keyof Keys, keyof Rules>>>;

type LimitedRoute = keyof typeof ROUTES;

/** One key's calls in its current window as this process counted them; past the limit, the key is refused. */
type LocalWindow = { calls: number; endsAt: number };

/**
 * One limit: a counter per key in this process in front of the shared store. The process reports its calls to
 * the store in batches of `every` (one write per batch, not per call), and refuses a key here once the store
 * says it is spent, so the busiest path (/mcp) mostly costs a map lookup. The batch is 1/20 of the limit, at most
 * REPORT_BATCH_MAX: all instances together may overshoot by under 5 % each.
 */
/** A report costs a store write (an upsert); at 50 calls a report, /mcp's two limits cost one write per 25 calls. */
const REPORT_BATCH_MAX = 50;

/**
 * Keys a process counts in memory, per limit; past this the least recently used is forgotten and starts again
 * from zero here, so it can gain at most one batch of unreported calls, and only once this many other keys have
 * been counted since. Unbounded, requests that each claim a new address (X-Forwarded-For is the client's own when
 * nothing in front of the app sets it) filled the heap until the process died; and a counter that expired by a
 * timer of its own also kept the whole request that started it (the timer inherits Next's request context).
 */
const LOCAL_KEYS_MAX = 10_000;

class SharedLimit {
  private readonly local = new LRUCache<string, LocalWindow>({ max: LOCAL_KEYS_MAX });
  private readonly every: number;

  constructor(
    private readonly shared: RateLimiterAbstract,
    private readonly rule: RateRule,
  ) {
    this.every = Math.max(1, Math.min(REPORT_BATCH_MAX, Math.floor(rule.points / 20)));
  }

  async spend(key: string): Promise<void> {
    const now = Date.now();
    let window = this.local.get(key);
    if (!window || window.endsAt <= now) this.local.set(key, (window = { calls: 0, endsAt: now + this.rule.seconds * 1000 }));
    window.calls++;
    if (window.calls > this.rule.points) throw refusedUntil(window.endsAt, now);
    if (window.calls % this.every !== 0) return;
    try {
      await this.shared.consume(key, this.every);
    } catch (refused) {
      // A store that fails (the database or Redis away) leaves the count to this process: the limit holds per
      // process meanwhile, and no request fails for it.
      if (!(refused instanceof RateLimiterRes)) return;
      const endsAt = now + Math.max(1000, refused.msBeforeNext);
      this.local.set(key, { calls: this.rule.points + 1, endsAt });
      throw refusedUntil(endsAt, now);
    }
  }
}

function refusedUntil(endsAt: number, now: number): RateLimitedError {
  return new RateLimitedError(Math.max(1, Math.ceil((endsAt - now) / 1000)));
}

let redis: Redis | undefined;

/** The shared counter for one rule, in Redis when one is configured, else in the database. */
function sharedStore(name: string, rule: RateRule): RateLimiterAbstract {
  const { redisUrl, baseUrl } = config();
  const options = {
    // One deployment's counters, apart from any other sharing the store.
    keyPrefix: `rl:${baseUrl}:${name}`,
    points: rule.points,
    duration: rule.seconds,
  };
  if (redisUrl) {
    // Commands wait for the first connection; while Redis is away each fails after one reconnection attempt.
    redis ??= new Redis(redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
    return new RateLimiterRedis({ ...options, storeClient: redis });
  }
  return new DatabaseRateLimitStore(options);
}

const limits = new Map<string, SharedLimit>();

function limitOf(name: string, rule: RateRule): SharedLimit {
  let limit = limits.get(name);
  if (!limit) limits.set(name, (limit = new SharedLimit(sharedStore(name, rule), rule)));
  return limit;
}

/** Long keys (a client_id may be a URL) are stored by their digest. */
function storedKey(value: string): string {
  return value.length <= 100 ? value : createHash("sha256").update(value).digest("base64url");
}

/**
 * Counts one request to `route` (or one fetch) against its limits by the keys given (address, client, person, host:
 * /mcp gives its address before the bearer check and its grant after); throws a RateLimitedError, carrying
 * Retry-After, when one of them is spent.
 */
export async function spendRateLimit(route: LimitedRoute, keys: Keys): Promise<void> {
  const rules: Partial<Record<keyof Keys, keyof Rules>> = ROUTES[route];
  for (const [dimension, key] of Object.entries(keys) as [keyof Keys, string][]) {
    const rule = rules[dimension];
    if (!rule) throw new Error(`rate limit ${route} has no ${dimension} limit`);
    await limitOf(`${route}:${dimension}`, config().rateLimits[rule]).spend(storedKey(key));
  }
}
