// Above an allowance, in words: the amount, the cap by its period, what is left and when it resets (its date when
// not today); the number of payments as what it is, counted over the allowance's whole life.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther } from "viem";
import { overAllowanceWords } from "./refusal-words";
import { DAY } from "./caveats";

const NOW = new Date("2026-11-28T10:00:00Z");
const ETH = { symbol: "ETH", decimals: 18 };
const left = (fields: { available?: string; resetsAt?: string; transfersLeft?: number; periodSeconds?: number } = {}) => ({
  available: String(parseEther("0.03")),
  resetsAt: "2026-11-28T14:00:00.000Z",
  transfersLeft: 2,
  token: null,
  periodSeconds: DAY,
  ...fields,
});

describe("overAllowanceWords", () => {
  it("the amount over the cap a day, what is left and the reset today", () => {
    assert.equal(
      overAllowanceWords(left(), ETH, NOW, { amount: parseEther("0.04"), perPeriod: parseEther("0.05") }),
      "0.04 ETH is over your allowance of 0.05 ETH a day; 0.03 ETH left until it resets at 14:00 UTC.",
    );
  });

  it("a reset on another day names the day; a week's cap says a week", () => {
    const weekly = left({ resetsAt: "2026-11-30T09:00:00.000Z", periodSeconds: 7 * DAY, available: "0" });
    assert.equal(
      overAllowanceWords(weekly, { symbol: "USDC", decimals: 6 }, NOW, { amount: 2_500_000n, perPeriod: 10_000_000n }),
      "2.5 USDC is over your allowance of 10 USDC a week; nothing left until it resets on 30 Nov at 09:00 UTC.",
    );
  });

  it("above the cap by itself promises no reset", () => {
    assert.equal(
      overAllowanceWords(left(), ETH, NOW, { amount: parseEther("0.08"), perPeriod: parseEther("0.05") }),
      "0.08 ETH is over your allowance of 0.05 ETH a day.",
    );
  });

  it("without the cap known, what is left and when", () => {
    assert.equal(overAllowanceWords(left(), ETH, NOW), "Over your allowance: 0.03 ETH left until it resets at 14:00 UTC.");
  });

  it("no payments left: counted over the allowance's whole life, with no reset", () => {
    const words = overAllowanceWords(left({ transfersLeft: 0 }), ETH, NOW, { amount: 1n, perPeriod: parseEther("0.05") });
    assert.equal(words, "This allowance has no payments left: they are counted over its whole life, not per period.");
    assert.doesNotMatch(words, /resets/);
  });
});
