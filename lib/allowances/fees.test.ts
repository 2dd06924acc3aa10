// The relayer's fees under the operator's most, and its replacements of a transaction fees left behind: chain 31337
// has a most of 100 gwei per gas here, and a relayer of revocations of its own; chain 1 none (a replacement then pays at
// most ten times its nonce's first offer).
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseGwei, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { localRelayerKey } from "./settings";

let fees: typeof import("./fees");

before(async () => {
  process.env.ALLOWANCE_MAX_FEE_PER_GAS = JSON.stringify({ 31337: parseGwei("100").toString() });
  process.env.ALLOWANCE_RELAYERS = JSON.stringify({ 31337: localRelayerKey() });
  process.env.ALLOWANCE_REVOCATION_RELAYERS = JSON.stringify({ 31337: localRelayerKey("revocations") });
  fees = await import("./fees");
});

const gwei = (maxFee: string, tip: string) => ({ maxFeePerGas: parseGwei(maxFee), maxPriorityFeePerGas: parseGwei(tip) });
/** Today's fees as the relayer reads them: the base fee × 1.2 plus the node's tip, and that base fee. */
const today = (base: string, tip: string) => {
  const [baseFeePerGas, maxPriorityFeePerGas] = [parseGwei(base), parseGwei(tip)];
  return { maxFeePerGas: (baseFeePerGas * 12n) / 10n + maxPriorityFeePerGas, maxPriorityFeePerGas, baseFeePerGas };
};

describe("fees within the operator's most", () => {
  it("are today's while below it", () => {
    assert.deepEqual(fees.feesWithinMost(31337, today("10", "1"), "payment"), gwei("13", "1"));
  });
  it("are held at it when today's cap is above it but the base fee is not", () => {
    assert.deepEqual(fees.feesWithinMost(31337, today("90", "2"), "payment"), gwei("100", "2"));
  });
  it("refuse a payment while the base fee alone is above it, saying both in gwei", () => {
    assert.throws(
      () => fees.feesWithinMost(31337, today("150", "2"), "payment"),
      (error: Error) =>
        error instanceof fees.FeesTooHighError && /most the relayer pays \(100 gwei.*base fee is 150 gwei/.test(error.message),
    );
  });
  it("sign an authorization at the most, to wait for the base fee to fall", () => {
    assert.deepEqual(fees.feesWithinMost(31337, today("150", "2"), "authorization"), gwei("100", "2"));
  });
  it("are today's for a revocation, whatever the most", () => {
    assert.deepEqual(fees.feesWithinMost(31337, today("150", "2"), "revocation"), gwei("182", "2"));
  });
  it("are today's on a chain with no most", () => {
    assert.deepEqual(fees.feesWithinMost(1, today("5000", "2"), "payment"), gwei("6002", "2"));
  });
});

describe("a waiting transaction's replacement", () => {
  const first = gwei("13", "1");
  it("is none while it can be mined at today's fees", () => {
    assert.equal(fees.replacementFees(31337, "payment", gwei("13", "1"), today("11", "1"), first), null);
  });
  it("offers today's fees when the base fee rose past its cap", () => {
    assert.deepEqual(fees.replacementFees(31337, "payment", gwei("13", "1"), today("50", "1"), first), gwei("61", "1.125"));
  });
  it("is 12.5 % above the old when that is more than today's (the node takes 10 %)", () => {
    assert.deepEqual(fees.replacementFees(31337, "payment", gwei("13", "1"), today("11", "1.05"), first), gwei("14.625", "1.125"));
  });
  it("stops at the operator's most", () => {
    assert.deepEqual(fees.replacementFees(31337, "payment", gwei("61", "1"), today("200", "1"), first), gwei("100", "1.125"));
  });
  it("is none where the most leaves less than the node's 10 % bump", () => {
    assert.equal(fees.replacementFees(31337, "payment", gwei("95", "1"), today("200", "1"), first), null);
  });
  it("of a revocation pays past the most, up to ten times its nonce's first offer", () => {
    assert.deepEqual(fees.replacementFees(31337, "revocation", gwei("100", "1"), today("1000", "1"), first), gwei("130", "1.125"));
  });
  it("after the node refused one at its nonce (another sender's holds it), offers twice the refused, up to the most", () => {
    const waiting = gwei("2.2", "1");
    assert.deepEqual(fees.replacementFees(31337, "payment", waiting, today("50", "1"), first, gwei("61", "1.125")), gwei("100", "2.25"));
    assert.deepEqual(fees.replacementFees(31337, "payment", waiting, today("50", "1"), first, gwei("100", "2.25")), gwei("100", "4.5"));
    assert.equal(fees.replacementFees(31337, "payment", waiting, today("50", "1"), first, gwei("100", "100")), null);
  });
  it("is asked once the node refused its bytes, though they could be mined at today's fees", () => {
    assert.deepEqual(fees.replacementFees(31337, "payment", gwei("13", "1"), today("11", "1"), first, gwei("13", "1")), gwei("26", "2"));
  });
  it("pays at most ten times its nonce's first offer on a chain with no most", () => {
    assert.deepEqual(fees.replacementFees(1, "payment", gwei("100", "1"), today("1000", "1"), first), gwei("130", "1.125"));
  });
});

describe("a no-op that takes a nonce another sender's transaction holds", () => {
  it("offers today's fees 12.5 % above: it replaces one waiting below them", () => {
    assert.deepEqual(fees.cancelFees(31337, today("10", "1"), null), gwei("14.625", "1.125"));
  });
  it("after a refusal (the other offers more), twice what the highest refused offered", () => {
    assert.deepEqual(fees.cancelFees(31337, today("10", "1"), gwei("14.625", "1.125")), gwei("29.25", "2.25"));
  });
  it("stops at the operator's most, then is none: nothing offers more than the refused", () => {
    assert.deepEqual(fees.cancelFees(31337, today("10", "1"), gwei("80", "40")), gwei("100", "80"));
    assert.deepEqual(fees.cancelFees(31337, today("10", "1"), gwei("100", "80")), gwei("100", "100"), "the tip can still rise");
    assert.equal(fees.cancelFees(31337, today("10", "1"), gwei("100", "100")), null);
  });
  it("holds at the most even while today's fees are above it", () => {
    assert.deepEqual(fees.cancelFees(31337, today("150", "2"), null), gwei("100", "2.25"));
  });
  it("offers at most ten times today's fees on a chain with no most", () => {
    assert.deepEqual(fees.cancelFees(1, today("10", "1"), gwei("100", "10")), gwei("130", "20"));
  });
  it("of a relayer that sends revocations pays past the operator's most, up to ten times today's fees", () => {
    assert.deepEqual(fees.cancelFees(31337, today("150", "2"), null, "revocation"), gwei("204.75", "2.25"));
    assert.deepEqual(fees.cancelFees(31337, today("150", "2"), gwei("204.75", "2.25"), "revocation"), gwei("409.5", "4.5"));
    assert.equal(fees.cancelFees(31337, today("150", "2"), gwei("1820", "1820"), "revocation"), null);
  });
  it("is bounded as a revocation for the relayer of revocations alone", () => {
    const address = (key: Hex) => privateKeyToAccount(key).address;
    assert.equal(fees.boundAs(31337, "unblock", address(localRelayerKey("revocations"))), "revocation");
    assert.equal(fees.boundAs(31337, "unblock", address(localRelayerKey()).toLowerCase()), "unblock");
    assert.equal(fees.boundAs(31337, "payment", address(localRelayerKey("revocations"))), "payment");
  });
});
