import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { usablePrice } from "./feeds";

const NOW = new Date("2026-11-25T12:00:00Z");
const at = (secondsAgo: number) => BigInt(NOW.getTime() / 1000 - secondsAgo);

describe("usablePrice", () => {
  it("takes a fresh, positive answer with the feed's decimals", () => {
    assert.deepEqual(usablePrice({ answer: 2000_00000000n, updatedAt: at(60) }, 8, NOW, 3600), { answer: 2000_00000000n, decimals: 8 });
    assert.deepEqual(usablePrice({ answer: 1n, updatedAt: at(3600) }, 0, NOW, 3600), { answer: 1n, decimals: 0 });
  });

  it("refuses an answer older than the maximum age, or never updated", () => {
    assert.equal(usablePrice({ answer: 2000_00000000n, updatedAt: at(3601) }, 8, NOW, 3600), null);
    assert.equal(usablePrice({ answer: 2000_00000000n, updatedAt: 0n }, 8, NOW, 3600), null);
  });

  it("refuses zero and negative answers", () => {
    assert.equal(usablePrice({ answer: 0n, updatedAt: at(1) }, 8, NOW, 3600), null);
    assert.equal(usablePrice({ answer: -5n, updatedAt: at(1) }, 8, NOW, 3600), null);
  });
});
