// A flood in which every request claims a new address: as through a trusted proxy (TRUSTED_PROXIES=loopback) that
// passes on what many clients, or one that reaches the app past it, say in X-Forwarded-For. Each request can start a
// new per-address counter. The server must keep answering and keep counting: the counters a process keeps in memory
// are bounded in number, and none of them holds on to the request that created it.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { expectOAuthLimited, from, registerFrom, spend } from "../support/limits";

const ADDRESSES = 15_000;
const CONCURRENCY = 16;

describe("a flood of new addresses", { timeout: 300_000 }, () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp({ env: { RATE_LIMIT_REGISTER_PER_IP: "100/1h", TRUSTED_PROXIES: "loopback" } });
  });
  after(() => app?.stop());

  /** Registration with metadata it refuses (400): counted against the address, nothing written. */
  const refusedRegistrationFrom = (ip: string) =>
    fetch(`${app.baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...from(ip) },
      body: "{}",
    });

  it(`${ADDRESSES} requests to a limited route, each from a new address: all answered, and limits still hold after`, async () => {
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < ADDRESSES) {
          const index = next++;
          const response = await refusedRegistrationFrom(`10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`);
          await response.body?.cancel();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    );
    assert.deepEqual(Object.fromEntries(statuses), { 400: ADDRESSES });

    // The process that served the flood still counts: one more address spends its 100 and is refused.
    await expectOAuthLimited(await spend(100, () => registerFrom(app, "10.255.0.1")));
    // And the first address of the flood, long forgotten by this process's memory, still has 99 left.
    assert.equal((await refusedRegistrationFrom("10.0.0.0")).status, 400);
  });
});
