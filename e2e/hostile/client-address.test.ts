// Whose address a per-address limit counts, over real HTTP against the started app. With no proxy trusted (the
// default) it is the connection's own: X-Forwarded-For, or the header in which the server passes the connection's
// address on, forged by the client, neither resets a spent limit nor splits one. With TRUSTED_PROXIES=loopback (as
// behind a proxy on the same machine) the proxy's X-Forwarded-For entry counts; an IPv6 one by its /64.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { expectMcpLimited, expectOAuthLimited, from, mcpFrom, registerFrom, spend } from "../support/limits";

const LIMITS = { RATE_LIMIT_REGISTER_PER_IP: "3/1h", RATE_LIMIT_MCP_PER_IP: "4/1m" };
const FORGED_CONNECTION = "x-agent-wallet-connection";

describe("the address a limit counts", { timeout: 120_000 }, () => {
  describe("with no proxy trusted", () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp({ env: LIMITS });
    });
    after(() => app?.stop());

    it("registration: a new X-Forwarded-For on each request neither splits the limit nor resets it", async () => {
      let address = 0;
      await expectOAuthLimited(await spend(3, () => registerFrom(app, `10.20.0.${++address}`)));
      await expectOAuthLimited(await registerFrom(app, "10.20.1.1"));
      const forgedConnection = await fetch(`${app.baseUrl}/oauth/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json", [FORGED_CONNECTION]: "10.20.2.1", ...from("10.20.2.1") },
        body: JSON.stringify({ client_name: "Flood", redirect_uris: ["http://localhost:8976/callback"] }),
      });
      await expectOAuthLimited(forgedConnection);
    });

    it("/mcp (past Next's routing too): a forged address does not escape the limit before the bearer check", async () => {
      let address = 0;
      await expectMcpLimited(await spend(4, () => mcpFrom(app, `10.21.0.${++address}`, null)));
      await expectMcpLimited(await mcpFrom(app, "10.21.1.1", null));
      const forgedConnection = await fetch(`${app.baseUrl}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json", [FORGED_CONNECTION]: "10.21.2.1", ...from("10.21.2.1") },
        body: "{}",
      });
      await expectMcpLimited(forgedConnection);
    });
  });

  describe("with TRUSTED_PROXIES=loopback", () => {
    let app: RunningApp;
    before(async () => {
      app = await startApp({ env: { ...LIMITS, TRUSTED_PROXIES: "loopback" } });
    });
    after(() => app?.stop());

    it("the entry the proxy on loopback appended counts; entries a client put before it do not", async () => {
      await expectOAuthLimited(await spend(3, () => registerFrom(app, "10.30.0.1")));
      await expectOAuthLimited(await registerFrom(app, "203.0.113.9, 10.30.0.1"));
      assert.equal((await registerFrom(app, "10.30.0.2")).status, 201, "another client behind the proxy is not slowed");
    });

    it("/mcp counts the same way", async () => {
      await expectMcpLimited(await spend(4, () => mcpFrom(app, "10.31.0.1", null)));
      assert.equal((await mcpFrom(app, "10.31.0.2", null)).status, 401);
    });

    it("an IPv6 client counts by its /64: a new address in it is refused with the rest, the next /64 is not", async () => {
      let host = 0;
      await expectOAuthLimited(await spend(3, () => registerFrom(app, `2001:db8:30:1::${++host}`)));
      await expectOAuthLimited(await registerFrom(app, "2001:db8:30:1:ffff:ffff:ffff:ffff"));
      assert.equal((await registerFrom(app, "2001:db8:30:2::1")).status, 201, "another /64 is another client");
      // An IPv4-mapped IPv6 address is its IPv4 address.
      await expectOAuthLimited(await spend(3, () => registerFrom(app, "::ffff:10.30.1.1")));
      await expectOAuthLimited(await registerFrom(app, "10.30.1.1"));
    });

    it("/mcp counts an IPv6 client by its /64 too", async () => {
      let host = 0;
      await expectMcpLimited(await spend(4, () => mcpFrom(app, `2001:db8:31:1:${++host}::1`, null)));
      assert.equal((await mcpFrom(app, "2001:db8:31:2::1", null)).status, 401);
    });
  });
});
