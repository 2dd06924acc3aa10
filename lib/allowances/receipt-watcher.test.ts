// The receipt watcher's choice of blocks to read and of when its waiters' work runs (issue 55); the watcher itself
// against a chain: e2e/support/fee-spike-suite.ts ("ten payments waiting together").
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BLOCKS_PER_TICK, blocksToRead, MOST_BEHIND, START_BACK, workDue } from "./receipt-watcher";

describe("the blocks the receipt watcher reads", () => {
  it("on a start: the head and the few before it (a transaction mined between its send and the start)", () => {
    assert.deepEqual(blocksToRead(null, 100n), { from: 100n - START_BACK, to: 100n, jumped: false });
    assert.deepEqual(blocksToRead(null, 1n), { from: 0n, to: 1n, jumped: false });
  });
  it("nothing while the head has not moved", () => {
    assert.equal(blocksToRead(100n, 100n), null);
  });
  it("the next block", () => {
    assert.deepEqual(blocksToRead(100n, 101n), { from: 101n, to: 101n, jumped: false });
  });
  it("every block the node went past between two asks, from the last one read + 1", () => {
    assert.deepEqual(blocksToRead(100n, 104n), { from: 101n, to: 104n, jumped: false });
  });
  it("at most BLOCKS_PER_TICK a tick: further ones on the next", () => {
    const head = 100n + BigInt(MOST_BEHIND);
    assert.deepEqual(blocksToRead(100n, head), { from: 101n, to: 100n + BigInt(BLOCKS_PER_TICK), jumped: false });
  });
  it("far behind (the node unreachable for long): the head's last blocks, the rest asked for directly", () => {
    const head = 101n + BigInt(MOST_BEHIND);
    assert.deepEqual(blocksToRead(100n, head), { from: head - BigInt(BLOCKS_PER_TICK) + 1n, to: head, jumped: true });
  });
  it("a head below the last read (a reorg to a shorter chain): that block again", () => {
    assert.deepEqual(blocksToRead(100n, 98n), { from: 98n, to: 98n, jumped: false });
  });
});

describe("when the waiters' work runs (the relayer's mined nonce, replacements)", () => {
  it("on a new block, once a second at most", () => {
    assert.equal(workDue(1_000, true), true);
    assert.equal(workDue(400, true), false);
  });
  it("every 2 s when no block comes", () => {
    assert.equal(workDue(1_999, false), false);
    assert.equal(workDue(2_000, false), true);
  });
});
