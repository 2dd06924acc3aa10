// Access tokens verified once are remembered until they expire (lib/oauth/access-token.ts): what is
// remembered must never outlive the token or accept a token that was not itself verified.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-token-"));
Object.assign(process.env, { DATA_DIR: dataDir, DATABASE_URL: `file:${path.join(dataDir, "agent-wallet.db")}` });
const { ACCESS_TOKEN_TTL_SECONDS, signAccessToken, verifyAccessToken } = await import("./access-token");
const { InvalidTokenError } = await import("./errors");

const claims = { sub: "usr_1", client_id: "cli_1", scope: "mcp", grant_id: "grt_1" };
const issuedAt = new Date("2026-11-25T10:00:00Z");
const at = (seconds: number) => () => new Date(issuedAt.getTime() + seconds * 1000);

async function refusal(token: string, clock: () => Date): Promise<string> {
  const error = await verifyAccessToken(token, clock).then(
    () => assert.fail("the token was accepted"),
    (refused: unknown) => refused,
  );
  assert.ok(error instanceof InvalidTokenError, String(error));
  return error.message;
}

describe("verifyAccessToken", () => {
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it("accepts a token again while it is valid, and refuses it once it expired, though it was verified before", async () => {
    const token = await signAccessToken(claims, at(0));
    assert.equal((await verifyAccessToken(token, at(1))).grant_id, "grt_1");
    assert.equal((await verifyAccessToken(token, at(ACCESS_TOKEN_TTL_SECONDS - 1))).grant_id, "grt_1");
    assert.match(await refusal(token, at(ACCESS_TOKEN_TTL_SECONDS)), /expired/);
    assert.match(await refusal(token, at(ACCESS_TOKEN_TTL_SECONDS + 60)), /expired/);
  });

  it("refuses a token whose signature or claims were changed after a valid one was verified", async () => {
    const token = await signAccessToken(claims, at(0));
    await verifyAccessToken(token, at(1));
    const [header, payload, signature] = token.split(".");
    const widened = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), grant_id: "grt_2" }));
    assert.match(await refusal(`${header}.${widened.toString("base64url")}.${signature}`, at(1)), /invalid/);
    const flipped = `${signature.slice(0, -2)}${signature.endsWith("AA") ? "BB" : "AA"}`;
    assert.match(await refusal(`${header}.${payload}.${flipped}`, at(1)), /invalid/);
  });

  it("returns claims no caller can change for the next one", async () => {
    const token = await signAccessToken(claims, at(0));
    const first = await verifyAccessToken(token, at(1));
    assert.throws(() => Object.assign(first, { grant_id: "grt_other" }), TypeError);
    assert.equal((await verifyAccessToken(token, at(2))).grant_id, "grt_1");
  });
});
