import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { approve, createUser, createWatchCredential, register, startValidAuthorization } from "../support/oauth";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import { RETENTION, sweepExpired } from "@/lib/db/sweep";

const NOW = new Date("2026-06-01T12:00:00.000Z");
const ago = (ms: number) => new Date(NOW.getTime() - ms);
const clock = () => NOW;

describe("sweeping expired rows", () => {
  let app: RunningApp;
  let userId = "";
  before(async () => {
    app = await startApp();
    userId = (await createUser()).id;
  });
  after(() => app?.stop());

  async function seed(label: string, expiredFor: number) {
    const expiresAt = ago(expiredFor);
    const createdAt = ago(expiredFor + 60_000);
    await db().webAuthnChallenge.create({
      data: { id: randomId("ch_"), purpose: "sign-in", challenge: randomId(label), createdAt, expiresAt },
    });
    await db().authorizationRequest.create({
      data: {
        id: randomId("ar_"),
        clientId: "c_x",
        redirectUri: "http://localhost/cb",
        codeChallenge: "x",
        scope: "mcp",
        createdAt,
        expiresAt,
      },
    });
    const common = { grantId: "g_x", clientId: "c_x", scope: "mcp", createdAt, expiresAt };
    await db().authorizationCode.create({
      data: { codeHash: randomId(label), redirectUri: "http://localhost/cb", codeChallenge: "x", usedAt: createdAt, ...common },
    });
    await db().refreshToken.create({ data: { tokenHash: randomId(label), rotatedAt: createdAt, ...common } });
  }

  async function request(status: string, createdAgo: number) {
    const createdAt = ago(createdAgo);
    await db().agentRequest.create({
      data: {
        id: randomId("rq_"),
        userId,
        grantId: "g_x",
        clientId: "c_x",
        credentialId: "cr_x",
        kind: "sign_message",
        status,
        payload: "{}",
        digest: "0x",
        createdAt,
        expiresAt: new Date(createdAt.getTime() + 600_000),
      },
    });
  }

  const counts = async () => ({
    webauthnChallenge: await db().webAuthnChallenge.count(),
    authorizationRequest: await db().authorizationRequest.count(),
    authorizationCode: await db().authorizationCode.count(),
    refreshToken: await db().refreshToken.count(),
    agentRequest: await db().agentRequest.count(),
  });

  it("deletes what is past its retention, keeps the rest (a spent code stays a day to catch replays), in bounded batches", async () => {
    for (let index = 0; index < 5; index++) await seed(`old${index}_`, 2 * RETENTION.authorizationCode);
    await seed("recent_", RETENTION.webauthnChallenge / 2); // expired, but within every retention
    for (let index = 0; index < 5; index++) await request("completed", RETENTION.agentRequest + 86_400_000);
    await request("pending", RETENTION.agentRequest + 86_400_000); // never looked at: expired long ago
    await request("submitted", RETENTION.agentRequest + 86_400_000); // still waits for its receipt
    await request("completed", RETENTION.agentRequest / 2);
    const start = await counts();

    // At most 2 batches of 2 per kind in one sweep: 4 of the old rows go, the rest wait for the next sweep.
    const first = await sweepExpired({ batchSize: 2, maxBatches: 2, clock });
    const nothingElse = { rateLimit: 0, dpopProof: 0, unusedClient: 0 };
    assert.deepEqual(first, {
      webauthnChallenge: 4,
      authorizationRequest: 4,
      authorizationCode: 4,
      refreshToken: 4,
      agentRequest: 4,
      ...nothingElse,
    });
    const second = await sweepExpired({ batchSize: 2, maxBatches: 2, clock });
    assert.deepEqual(second, {
      webauthnChallenge: 1,
      authorizationRequest: 1,
      authorizationCode: 1,
      refreshToken: 1,
      agentRequest: 2,
      ...nothingElse,
    });
    assert.deepEqual(await sweepExpired({ clock }), {
      webauthnChallenge: 0,
      authorizationRequest: 0,
      authorizationCode: 0,
      refreshToken: 0,
      agentRequest: 0,
      ...nothingElse,
    });

    const end = await counts();
    for (const kind of ["webauthnChallenge", "authorizationRequest", "authorizationCode", "refreshToken"] as const) {
      assert.equal(end[kind], start[kind] - 5, `${kind}: the recent row stays`);
    }
    assert.equal(end.agentRequest, start.agentRequest - 6);
    const left = await db().agentRequest.findMany({ where: { userId }, select: { status: true } });
    assert.deepEqual(left.map((row) => row.status).sort(), ["completed", "submitted"]);
  });

  it("deletes dynamically registered clients that never got a grant after UNUSED_CLIENT_RETENTION_HOURS, keeps used ones", async () => {
    const unused = await register(app);
    const used = await register(app);
    const { requestId } = await startValidAuthorization(app, used);
    const credentialId = (await createWatchCredential(userId)).id;
    await approve(requestId, userId, [{ credentialId, mode: "read" }]);
    const exists = async (id: string) => (await db().client.count({ where: { id } })) === 1;

    const hours = (count: number) => () => new Date(Date.now() + count * 3_600_000);
    assert.equal((await sweepExpired({ clock: hours(23) })).unusedClient, 0, "within the retention (24 h by default) it stays");
    assert.ok(await exists(unused.client_id));
    await sweepExpired({ clock: hours(25) });
    assert.equal(await exists(unused.client_id), false, "never granted: swept");
    assert.ok(await exists(used.client_id), "granted: kept");
  });

  it("deletes rate-limit counters whose window is over", async () => {
    await db().rateLimit.create({ data: { key: "old", points: 3, expire: ago(1) } });
    await db().rateLimit.create({ data: { key: "live", points: 3, expire: new Date(NOW.getTime() + 60_000) } });
    assert.equal((await sweepExpired({ clock })).rateLimit, 1);
    assert.deepEqual(
      (await db().rateLimit.findMany({ where: { key: { in: ["old", "live"] } } })).map((row) => row.key),
      ["live"],
    );
  });
});
