import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { eventHash, GENESIS_HASH } from "./chain";

describe("eventHash", () => {
  const event = {
    seq: 1,
    at: new Date("2026-01-01T00:00:00.000Z"),
    type: "client.registered",
    userId: null,
    clientId: "c_1",
    credentialId: null,
    requestId: null,
    data: '{"name":"x"}',
    prevHash: GENESIS_HASH,
  };

  it("is a SHA-256 hex digest, stable for the same event", () => {
    assert.match(eventHash(event), /^[0-9a-f]{64}$/);
    assert.equal(eventHash(event), eventHash({ ...event }));
  });

  it("changes when any field or the previous hash changes", () => {
    const base = eventHash(event);
    for (const change of [
      { seq: 2 },
      { at: new Date("2026-01-01T00:00:00.001Z") },
      { type: "client.revoked" },
      { userId: "u_1" },
      { clientId: "c_2" },
      { credentialId: "cr_1" },
      { requestId: "r_1" },
      { data: '{"name":"y"}' },
      { prevHash: "1".repeat(64) },
    ]) {
      assert.notEqual(eventHash({ ...event, ...change }), base, JSON.stringify(change));
    }
  });
});
