// Rotating the access-token signing key without downtime (docs/operations.md), over real HTTP against
// instances on one database: a token signed by the old key keeps working while the old key is still listed,
// new tokens are signed by the new key, and once the old key is dropped its tokens are refused.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { decodeProtectedHeader } from "jose";
import { startApp, type RunningApp } from "../support/app";
import { INITIALIZE_PARAMS, mcp, obtainTokens, refreshTokens } from "../support/oauth";

const key = (kid: string) => `${kid}:${randomBytes(32).toString("base64url")}`;

describe("signing-key rotation", { timeout: 120_000 }, () => {
  const running: RunningApp[] = [];
  after(async () => {
    for (const app of running.reverse()) await app.stop();
  });
  async function instance(keys: string, of?: RunningApp) {
    // PostgreSQL: instances side by side on one database, as in a rolling deployment.
    const app = await startApp({ database: "postgres", instanceOf: of, env: { JWT_SIGNING_KEYS: keys, SESSION_SECRET: "s".repeat(48) } });
    running.push(app);
    return app;
  }

  it("old tokens verify until their key is dropped; new tokens carry the new kid", async () => {
    const oldKey = key("k2026a");
    const newKey = key("k2026b");
    const before = await instance(oldKey);
    const { client, tokens } = await obtainTokens(before);
    assert.equal(decodeProtectedHeader(tokens.access_token).kid, "k2026a");

    const rotated = await instance(`${newKey},${oldKey}`, before);
    assert.equal((await mcp(rotated, tokens.access_token, "initialize", INITIALIZE_PARAMS)).status, 200, "the old token still works");
    const refreshed = await refreshTokens(rotated, client, tokens.refresh_token!);
    assert.equal(refreshed.status, 200);
    const next = (await refreshed.json()) as { access_token: string };
    assert.equal(decodeProtectedHeader(next.access_token).kid, "k2026b", "new tokens are signed with the new key");

    const dropped = await instance(newKey, before);
    const refused = await mcp(dropped, tokens.access_token, "initialize", INITIALIZE_PARAMS);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    assert.equal((await mcp(dropped, next.access_token, "initialize", INITIALIZE_PARAMS)).status, 200);
  });
});
