import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther, parseUnits } from "viem";
import { amountWithMoney, moneyAmount, moneyText, readableDecimal } from "./format";

const ETH_AT_2000 = { answer: 2000n * 10n ** 8n, decimals: 8 };

describe("moneyText", () => {
  it("values an amount at the feed's answer, with the feed's and the asset's decimals", () => {
    assert.equal(moneyText(parseEther("0.1"), 18, ETH_AT_2000, "USD"), "$200.00");
    assert.equal(moneyText(parseUnits("2.5", 6), 6, { answer: 100_000_000n, decimals: 8 }, "USD"), "$2.50");
    assert.equal(moneyText(parseEther("1234.5"), 18, ETH_AT_2000, "USD"), "$2,469,000.00");
  });

  it("rounds to the currency's smallest unit without floating point drift", () => {
    assert.equal(moneyText(parseEther("0.000123456"), 18, ETH_AT_2000, "USD"), "$0.25");
    // 2^53 + 1 cents survives: the value is formatted from its decimal string, not a float.
    assert.equal(moneyText(9007199254740993n, 2, { answer: 1n, decimals: 0 }, "USD"), "$90,071,992,547,409.93");
  });

  it("says a value under a cent is under a cent, and zero is zero", () => {
    assert.equal(moneyText(1n, 18, ETH_AT_2000, "USD"), "< $0.01");
    assert.equal(moneyText(0n, 18, ETH_AT_2000, "USD"), "$0.00");
  });

  it("writes the configured currency", () => {
    assert.equal(moneyText(parseEther("0.1"), 18, ETH_AT_2000, "EUR"), "€200.00");
    assert.equal(moneyText(parseEther("1"), 18, { answer: 300_000n, decimals: 0 }, "JPY"), "¥300,000");
  });
});

describe("moneyAmount", () => {
  it("is the exact decimal value, nothing rounded", () => {
    assert.equal(moneyAmount(parseEther("0.1"), 18, ETH_AT_2000), "200");
    assert.equal(moneyAmount(parseEther("0.000123456"), 18, ETH_AT_2000), "0.246912");
    assert.equal(moneyAmount(1n, 18, ETH_AT_2000), "0.000000000000002");
  });
});

describe("amountWithMoney", () => {
  it("adds the value after the amount, or nothing without a price", () => {
    assert.equal(amountWithMoney("0.1 ETH", "$200.00"), "0.1 ETH (≈ $200.00)");
    assert.equal(amountWithMoney("0.1 ETH", null), "0.1 ETH");
  });
});

describe("readableDecimal", () => {
  it("leaves an amount of a few significant digits as it is", () => {
    for (const exact of ["0", "10", "1234.5", "0.000021", "100000000", "-2.5"]) assert.equal(readableDecimal(exact), exact);
  });

  it("shortens a long one to 4 significant digits, its whole part and 2 decimals kept, rounded half up", () => {
    assert.equal(readableDecimal("9.899968500000000001"), "9.9");
    assert.equal(readableDecimal("98.7654321"), "98.77");
    assert.equal(readableDecimal("1234.56789"), "1234.57");
    assert.equal(readableDecimal("1234567.891"), "1234567.89");
    assert.equal(readableDecimal("0.000123456789"), "0.0001235");
    assert.equal(readableDecimal("0.1234449"), "0.1234");
    assert.equal(readableDecimal("9.9999999"), "10");
    assert.equal(readableDecimal("-0.55555555"), "-0.5556");
  });
});
