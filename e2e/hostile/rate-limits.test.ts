// Rate limits over real HTTP against the started app, with limits low enough to spend: each limited route
// answers 429 with Retry-After in its protocol's format, and another address, client or person is unaffected.
// Counters shared by two instances: e2e/postgres/rate-limits.test.ts, e2e/hostile/rate-limits-redis.test.ts.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { obtainTokens, register, type TestClient } from "../support/oauth";
import {
  expectAppLimited,
  expectMcpLimited,
  expectOAuthLimited,
  formFrom,
  from,
  mcpFrom,
  registerFrom,
  retryAfter,
  spend,
} from "../support/limits";
import { signedUpSession } from "../support/session";
import { db } from "@/lib/db";

const LOW_LIMITS = {
  TRUSTED_PROXIES: "1",
  RATE_LIMIT_REGISTER_PER_IP: "5/1h",
  RATE_LIMIT_OAUTH_PER_IP: "4/1m",
  RATE_LIMIT_OAUTH_PER_CLIENT: "6/1m",
  RATE_LIMIT_MCP_PER_IP: "8/1m",
  RATE_LIMIT_MCP_PER_CLIENT: "5/1m",
  RATE_LIMIT_ACCOUNT_PER_IP: "3/1m",
  RATE_LIMIT_APPROVALS_PER_PERSON: "2/1m",
};

describe("rate limits", { timeout: 120_000 }, () => {
  let app: RunningApp;
  let client: TestClient;
  before(async () => {
    app = await startApp({ env: LOW_LIMITS });
    // Set up from addresses no test spends.
    client = await register(app);
  });
  after(() => app?.stop());

  it("registration: per address, 429 temporarily_unavailable with Retry-After; another address still registers", async () => {
    const clients = await db().client.count();
    await expectOAuthLimited(await spend(5, () => registerFrom(app, "10.1.0.1")));
    assert.equal(await db().client.count(), clients + 5, "the refused registration wrote nothing");
    assert.equal((await registerFrom(app, "10.1.0.2")).status, 201);
  });

  it("the address is the proxy's last X-Forwarded-For entry: a client-chosen entry before it changes nothing", async () => {
    await spend(5, () => registerFrom(app, "10.1.1.1"));
    await expectOAuthLimited(await registerFrom(app, "203.0.113.9, 10.1.1.1"));
  });

  it("token: per address, then per client_id from any address; another client is unaffected", async () => {
    const exchange = (ip: string, clientId: string) =>
      formFrom(app, "/oauth/token", ip, { grant_type: "refresh_token", client_id: clientId, refresh_token: "nope" });
    await expectOAuthLimited(await spend(4, () => exchange("10.2.0.1", client.client_id)));
    // The address's limit refused the fifth before the client's counted it: two more from elsewhere make 6.
    let address = 0;
    await expectOAuthLimited(await spend(2, () => exchange(`10.2.1.${++address}`, client.client_id)));
    const other = await register(app);
    assert.equal((await exchange("10.2.0.4", other.client_id)).status, 400, "another client is not slowed");
  });

  it("revocation: per address", async () => {
    const revoke = (ip: string) => formFrom(app, "/oauth/revoke", ip, { client_id: `c_${ip}`, token: "nope" });
    await expectOAuthLimited(await spend(4, () => revoke("10.3.0.1")));
    assert.notEqual((await revoke("10.3.0.2")).status, 429);
  });

  it("authorize: per address, a 429 page with Retry-After (no redirect before the client is checked)", async () => {
    const authorize = (ip: string) =>
      fetch(`${app.baseUrl}/oauth/authorize?client_id=${client.client_id}&response_type=code`, { headers: from(ip), redirect: "manual" });
    const refused = await spend(4, () => authorize("10.4.0.1"));
    assert.equal(refused.status, 429);
    retryAfter(refused);
    assert.match(refused.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await refused.text(), /Too many requests/);
    assert.notEqual((await authorize("10.4.0.2")).status, 429);
  });

  it("/mcp: per grant, a JSON-RPC error with Retry-After; a burst from one client does not slow another", async () => {
    const first = await obtainTokens(app);
    const second = await obtainTokens(app);
    await expectMcpLimited(await spend(5, () => mcpFrom(app, "10.5.0.1", first.tokens.access_token)));
    assert.equal((await mcpFrom(app, "10.5.0.1", second.tokens.access_token)).status, 200, "the other grant, same address");
    await expectMcpLimited(await mcpFrom(app, "10.5.0.9", first.tokens.access_token));
  });

  it("/mcp: per address before the bearer is looked at", async () => {
    await expectMcpLimited(await spend(8, () => mcpFrom(app, "10.6.0.1", null)));
    assert.equal((await mcpFrom(app, "10.6.0.2", null)).status, 401);
  });

  it("sign-in, sign-up and the passkey callback: per address, the /api error shape", async () => {
    const post = (path: string, ip: string, body: string, type = "application/json") =>
      fetch(`${app.appUrl}${path}`, {
        method: "POST",
        headers: { Origin: app.appUrl, "Content-Type": type, ...from(ip) },
        body,
        redirect: "manual",
      });
    await expectAppLimited(await spend(3, () => post("/api/webauthn/sign-in", "10.7.0.1", "{}")));
    assert.equal((await post("/api/webauthn/sign-in", "10.7.0.2", "{}")).status, 200);
    await expectAppLimited(await spend(3, () => post("/api/webauthn/sign-up", "10.7.0.1", '{"email":"a@example.test"}')));
    const callback = (ip: string) =>
      post("/api/auth/callback/passkey", ip, "mode=sign-in&response=null", "application/x-www-form-urlencoded");
    await expectAppLimited(await spend(3, () => callback("10.7.0.1")));
    assert.notEqual((await callback("10.7.0.2")).status, 429);
  });

  it("approval attempts: per person and per address", async () => {
    const alice = await signedUpSession(app, "alice@example.test", from("10.8.0.1"));
    const bob = await signedUpSession(app, "bob@example.test", from("10.8.0.2"));
    const attempt = (session: typeof alice.session) =>
      session.request("/api/approvals/rq_missing/approve", { body: { assertion: {}, signature: "0x" } });
    await expectAppLimited(await spend(2, () => attempt(alice.session)));
    assert.notEqual((await attempt(bob.session)).status, 429, "another person is not slowed");
  });
});
