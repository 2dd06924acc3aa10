// When a relayer's nonce counts as held by a transaction the ledger does not have (or by nothing), and when the relayer
// takes it with a no-op; against a chain: e2e/support/fee-spike-suite.ts ("a nonce held by another sender's
// transaction").
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HELD_FOR_MS, heldNonce } from "./unblock";

const look = (latest: number, waitingFrom: number | null, at: number) => ({ latest, waitingFrom, at });

describe("a relayer's held nonce", () => {
  it("is none while the ledger waits at the mined count: replacement moves its transaction if need be", () => {
    assert.deepEqual(heldNonce(undefined, look(7, 7, 0)), { held: null, take: false });
  });
  it("is none while nothing waits in the ledger from the mined count on", () => {
    assert.deepEqual(heldNonce({ nonce: 7, since: 0 }, look(7, null, HELD_FOR_MS)), { held: null, take: false });
  });
  it("is the mined count when the ledger waits only past it, seen from this look, not taken at once", () => {
    assert.deepEqual(heldNonce(undefined, look(7, 8, 1_000)), { held: { nonce: 7, since: 1_000 }, take: false });
  });
  it("is taken once held at the same nonce since a look HELD_FOR_MS before", () => {
    const before = { nonce: 7, since: 1_000 };
    assert.deepEqual(heldNonce(before, look(7, 9, 1_000 + HELD_FOR_MS - 1)), { held: before, take: false });
    assert.deepEqual(heldNonce(before, look(7, 9, 1_000 + HELD_FOR_MS)), { held: before, take: true });
  });
  it("is seen afresh once the mined count moved: the nonce held before was mined", () => {
    assert.deepEqual(heldNonce({ nonce: 7, since: 0 }, look(8, 10, HELD_FOR_MS)), { held: { nonce: 8, since: HELD_FOR_MS }, take: false });
  });
});
