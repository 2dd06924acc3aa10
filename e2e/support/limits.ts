// Helpers of the rate-limit suites: requests as from a given address, the 429 of each protocol, and the suite
// that runs two instances of one deployment against a shared store.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { Redis } from "ioredis";
import { startApp, type RunningApp } from "./app";
import { INITIALIZE_PARAMS, obtainTokens } from "./oauth";
import { db } from "@/lib/db";
import { databaseFile } from "@/lib/config/database";

/** As a proxy in front would say it (TRUSTED_PROXIES=1): the request came from `ip`. */
export const from = (ip: string) => ({ "X-Forwarded-For": ip });

export async function registerFrom(app: RunningApp, ip: string): Promise<Response> {
  return fetch(`${app.baseUrl}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...from(ip) },
    body: JSON.stringify({ client_name: "Flood", redirect_uris: ["http://localhost:8976/callback"] }),
  });
}

export async function formFrom(app: RunningApp, path: string, ip: string, form: Record<string, string>): Promise<Response> {
  return fetch(`${app.baseUrl}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...from(ip) },
    body: new URLSearchParams(form),
  });
}

export async function mcpFrom(app: RunningApp, ip: string, bearer: string | null): Promise<Response> {
  return fetch(`${app.baseUrl}/mcp`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-06-18",
      ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
      ...from(ip),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE_PARAMS }),
  });
}

export function retryAfter(response: Response): number {
  const seconds = Number(response.headers.get("retry-after"));
  assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 3600, `Retry-After: ${response.headers.get("retry-after")}`);
  return seconds;
}

export async function expectOAuthLimited(response: Response) {
  assert.equal(response.status, 429);
  retryAfter(response);
  assert.equal(response.headers.get("access-control-allow-origin"), "*");
  const body = (await response.json()) as { error: string; error_description: string };
  assert.equal(body.error, "temporarily_unavailable");
  assert.match(body.error_description, /Too many requests/);
}

export async function expectMcpLimited(response: Response) {
  assert.equal(response.status, 429);
  retryAfter(response);
  const body = (await response.json()) as { jsonrpc: string; id: null; error: { code: number; message: string } };
  assert.equal(body.jsonrpc, "2.0");
  assert.equal(body.error.code, -32000);
  assert.match(body.error.message, /Too many requests/);
}

export async function expectAppLimited(response: Response) {
  assert.equal(response.status, 429);
  retryAfter(response);
  assert.deepEqual(Object.keys((await response.json()) as object), ["error", "message"]);
}

/** `count` calls that are not refused, then one that is. */
export async function spend(count: number, call: () => Promise<Response>): Promise<Response> {
  for (let index = 0; index < count; index++) {
    const response = await call();
    assert.notEqual(response.status, 429, `call ${index + 1} of ${count} was refused`);
    await response.body?.cancel();
  }
  return call();
}

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Two instances of one deployment, as behind a load balancer, counting in the database (SQLite or PostgreSQL) or in Redis. */
export function sharedCountersSuite(name: string, store: "sqlite" | "postgres" | "redis") {
  describe(name, { timeout: 120_000 }, () => {
    let first: RunningApp;
    let second: RunningApp;
    let redis: Redis | undefined;
    before(async () => {
      const env = { TRUSTED_PROXIES: "1", RATE_LIMIT_REGISTER_PER_IP: "4/1h", RATE_LIMIT_MCP_PER_CLIENT: "40/1m" };
      if (store === "redis") Object.assign(env, { REDIS_URL });
      first = await startApp({ database: store === "postgres" ? "postgres" : "sqlite", env });
      second = await startApp({ instanceOf: first, env });
      if (store === "redis") {
        // Counters of an earlier run on the same port would count here: this deployment starts from none.
        redis = new Redis(REDIS_URL);
        const stale = await redis.keys(`rl:${first.configuredBaseUrl}:*`);
        if (stale.length) await redis.del(...stale);
      }
    });
    after(async () => {
      await second?.stop();
      await first?.stop();
      redis?.disconnect();
    });

    it(`counts in ${store === "redis" ? "Redis, not the database" : "the database"}`, async () => {
      assert.equal((await registerFrom(first, "10.9.2.1")).status, 201);
      const rows = await db().rateLimit.count();
      if (store === "redis") {
        assert.equal(rows, 0);
        assert.ok((await redis!.keys(`rl:${first.configuredBaseUrl}:register:ip:*`)).length > 0);
      } else assert.ok(rows > 0);
    });

    it("a limit spent half on each instance is spent on both", async () => {
      for (const instance of [first, second, first, second]) assert.equal((await registerFrom(instance, "10.9.0.1")).status, 201);
      await expectOAuthLimited(await registerFrom(first, "10.9.0.1"));
      await expectOAuthLimited(await registerFrom(second, "10.9.0.1"));
    });

    it("/mcp reports to the shared store in batches (here every 2 calls): the overshoot is at most one batch", async () => {
      const { tokens } = await obtainTokens(first);
      for (let index = 0; index < 20; index++) {
        for (const instance of [first, second]) assert.equal((await mcpFrom(instance, "10.9.1.1", tokens.access_token)).status, 200);
      }
      const next = [await mcpFrom(first, "10.9.1.1", tokens.access_token), await mcpFrom(first, "10.9.1.1", tokens.access_token)];
      assert.ok(
        next.some((response) => response.status === 429),
        `after 40 calls: ${next.map((response) => response.status)}`,
      );
    });

    if (store === "sqlite")
      it("a report made while another connection holds the write lock waits for it and counts", async () => {
        const { client, tokens } = await obtainTokens(first);
        const grant = await db().grant.findFirstOrThrow({ where: { clientId: client.client_id } });
        const other = new Database(databaseFile({ DATABASE_URL: first.databaseUrl }));
        other.exec("BEGIN IMMEDIATE");
        const released = new Promise((resolve) => setTimeout(resolve, 500)).then(() => other.exec("COMMIT"));
        try {
          // Two reports of two calls each (1/20 of 40), both while the lock is held or just after.
          for (let index = 0; index < 4; index++) assert.equal((await mcpFrom(first, "10.9.3.1", tokens.access_token)).status, 200);
        } finally {
          await released;
          other.close();
        }
        const counters = await db().rateLimit.findMany({ where: { key: { endsWith: grant.id } } });
        assert.deepEqual(
          counters.map((counter) => counter.points),
          [4],
        );
      });
  });
}
