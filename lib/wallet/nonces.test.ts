import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { freeNonce } from "./nonces";

describe("freeNonce", () => {
  it("is the chain's pending count when nothing of the wallet is held", () => {
    assert.equal(freeNonce(7, []), 7);
  });

  it("skips the nonces other approvals in flight hold, so two never get one", () => {
    assert.equal(freeNonce(3, [3, 4]), 5);
  });

  it("fills a gap a lapsed hold left before one already sent, rather than leaving it for ever", () => {
    // 3's hold lapsed (never signed); 4 was sent and waits behind the gap.
    assert.equal(freeNonce(3, [4]), 3);
  });

  it("ignores what the chain has already passed", () => {
    assert.equal(freeNonce(5, [1, 2, 5]), 6);
  });
});
