// A cap's refusal in words: which limit, by how much, what is left and when it resets (with its date when not today).
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { formatEther, parseEther } from "viem";
import { breachWords } from "./policy-words";
import type { Breach } from "./policy";

const NOW = new Date("2026-11-28T10:00:00Z");
const eth = (amount: bigint) => `${formatEther(amount)} ETH`;
const breach = (fields: Partial<Breach>): Breach => ({
  window: "day",
  chainId: 1,
  token: null,
  amount: parseEther("0.08"),
  limit: parseEther("0.05"),
  remaining: parseEther("0.03"),
  resetsAt: new Date("2026-11-28T14:00:00Z"),
  ...fields,
});

describe("breachWords", () => {
  it("a daily cap: the amount, the limit by name, what is left and when it resets today", () => {
    assert.equal(
      breachWords(breach({ amount: parseEther("0.04") }), eth, "Main", NOW),
      "0.04 ETH is over your limit of 0.05 ETH a day for Main; 0.03 ETH left until it resets at 14:00 UTC",
    );
  });

  it("a reset on another day names the day", () => {
    const weekly = breach({ window: "week", amount: parseEther("0.04"), resetsAt: new Date("2026-11-30T09:00:00Z") });
    assert.equal(
      breachWords(weekly, eth, "Main on Base", NOW),
      "0.04 ETH is over your limit of 0.05 ETH a week for Main on Base; 0.03 ETH left until it resets on 30 Nov at 09:00 UTC",
    );
  });

  it("nothing left is said as nothing", () => {
    assert.equal(
      breachWords(breach({ amount: parseEther("0.01"), remaining: 0n }), eth, "Main", NOW),
      "0.01 ETH is over your limit of 0.05 ETH a day for Main; nothing left until it resets at 14:00 UTC",
    );
  });

  it("above the cap by itself, or a transaction's cap: no reset is promised", () => {
    assert.equal(breachWords(breach({}), eth, "Main", NOW), "0.08 ETH is over your limit of 0.05 ETH a day for Main");
    assert.equal(
      breachWords(breach({ window: "transaction", amount: parseEther("0.04"), resetsAt: null }), eth, "Main", NOW),
      "0.04 ETH is over your limit of 0.05 ETH a transaction for Main",
    );
  });
});
