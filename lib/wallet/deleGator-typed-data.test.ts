import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ANY_BENEFICIARY,
  createAllowedTargetsTerms,
  createNativeTokenPeriodTransferTerms,
  createNonceTerms,
  createTimestampTerms,
  createValueLteTerms,
} from "@metamask/delegation-core";
import { parseEther, type Address, type Hex } from "viem";
import { address, NOW, preparedAllowance, testFramework as framework } from "@/lib/allowances/framework.fixture";
import { DAY } from "@/lib/allowances/caveats";
import { recogniseDelegation, recogniseUserOperation } from "./deleGator-typed-data";
import { delegationTypedData, execute, mode, userOperationTypedData } from "@/lib/allowances/deleGator.fixture";

const PERSON = address(0xaaaa);
const DELEGATE = address(0xbbbb);
const SHOP = address(0xcccc);
const TOKEN = address(0xdddd);
const caveat = (name: keyof typeof framework.caveatEnforcers, terms: Hex) => ({ enforcer: framework.caveatEnforcers[name], terms });
const read = (caveats: { enforcer: Address; terms: Hex }[], more: { delegate?: Address; authority?: Hex } = {}) =>
  recogniseDelegation(delegationTypedData(framework, { delegate: DELEGATE, delegator: PERSON, caveats, ...more }), framework)!;

describe("a Delegation's typed data", () => {
  it("without caveats: nothing bounds it; the open delegate is anyone", () => {
    const reading = read([], { delegate: ANY_BENEFICIARY });
    assert.equal(reading.anyone, true);
    assert.deepEqual(reading.native, { uncounted: "it has no caveats, so it allows anything" });
    assert.deepEqual(reading.tokens, { uncounted: "it has no caveats, so it allows anything" });
    assert.equal(read([]).anyone, false);
  });

  it("this project's own allowances are bounded: coin by its calls and periods, tokens by their transfer limit", () => {
    const [coin, token] = preparedAllowance(PERSON, { tokens: [TOKEN] }).delegations;
    // 0.01 ETH a day for 7 days, at most 3 transfers: 0.03 ETH in all, and no token.
    const coinReading = read(coin.caveats);
    assert.deepEqual(coinReading.native, { counted: parseEther("0.03") });
    assert.deepEqual(coinReading.tokens, { counted: [] });
    assert.ok(
      coinReading.caveats.every((entry) => entry.name && entry.read),
      "every caveat named by its enforcer and read",
    );
    // 10 base units a day, 3 transfers: 30 of the token, and no coin (ValueLte 0).
    const tokenReading = read(token.caveats);
    assert.deepEqual(tokenReading.native, { counted: 0n });
    assert.deepEqual(tokenReading.tokens, { counted: [{ token: TOKEN, amount: 30n }] });
  });

  it("a limit on the coin counts only with an end, and only when its calls cannot reach the wallet's own code", () => {
    const perDay = caveat(
      "NativeTokenPeriodTransferEnforcer",
      createNativeTokenPeriodTransferTerms({ periodAmount: parseEther("0.05"), periodDuration: DAY, startDate: NOW }),
    );
    const onlyShop = caveat("AllowedTargetsEnforcer", createAllowedTargetsTerms({ targets: [SHOP] }));
    const week = caveat("TimestampEnforcer", createTimestampTerms({ afterThreshold: 0, beforeThreshold: NOW + 7 * DAY }));
    // Seven days of 0.05 ETH.
    assert.deepEqual(read([perDay, onlyShop, week]).native, { counted: parseEther("0.35") });
    assert.match(String((read([perDay, onlyShop]).native as { uncounted: string }).uncounted), /no end/);
    // A period of no length is refused by its enforcer: nothing passes it, whatever else the delegation says.
    const never = caveat("NativeTokenPeriodTransferEnforcer", `0x${"00".repeat(31)}01${"00".repeat(64)}`);
    assert.deepEqual(read([never, onlyShop]).native, { counted: 0n });
    // An execute on itself would move anything: a target list that names the wallet (or no list) bounds nothing.
    const selfToo = caveat("AllowedTargetsEnforcer", createAllowedTargetsTerms({ targets: [SHOP, PERSON] }));
    assert.match(String((read([perDay, selfToo, week]).native as { uncounted: string }).uncounted), /own code/);
    const atMost = caveat("ValueLteEnforcer", createValueLteTerms({ maxValue: parseEther("1") }));
    assert.match(String((read([atMost, week]).native as { uncounted: string }).uncounted), /own code/);
    // Tokens: calls to the shop with any call data could move any token.
    assert.match(String((read([perDay, onlyShop, week]).tokens as { uncounted: string }).uncounted), /which tokens/);
  });

  it("an unknown enforcer is shown, never counted; passed-on authority and a chain without the framework bound nothing", () => {
    const nonce = { enforcer: address(0x9999), terms: createNonceTerms({ nonce: "0x01" }) };
    const reading = read([nonce]);
    assert.deepEqual(reading.caveats, [{ ...nonce, name: null, read: null }]);
    assert.match(String((reading.native as { uncounted: string }).uncounted), /own code/);
    const passed = read([caveat("ValueLteEnforcer", createValueLteTerms({ maxValue: 0n }))], { authority: `0x${"12".repeat(32)}` });
    assert.match(String((passed.native as { uncounted: string }).uncounted), /passes on a delegation/);
    const elsewhere = recogniseDelegation(
      delegationTypedData(framework, { delegate: DELEGATE, delegator: PERSON, caveats: [nonce] }),
      null,
    );
    assert.match(String((elsewhere!.native as { uncounted: string }).uncounted), /no Delegation Framework/);
  });
});

describe("a user operation's typed data", () => {
  const run = execute([{ target: SHOP, value: parseEther("0.01"), callData: "0x" }]);

  it("its calls as the DeleGator runs them, and the most it pays for gas", () => {
    const operation = recogniseUserOperation(userOperationTypedData(framework, PERSON, run), framework)!;
    assert.deepEqual(operation.call, {
      kind: "runs",
      functionName: "execute",
      runs: [{ delegator: null, delegations: 0, executions: [{ target: SHOP, value: parseEther("0.01"), callData: "0x" }] }],
    });
    // (150,000 + 80,000 + 60,000) gas at 1 gwei.
    assert.equal(operation.gas, 290_000n * 1_000_000_000n);
    assert.equal(operation.uncounted, null);
  });

  it("a paymaster's terms, and calls that cannot be read, are named", () => {
    const paid = recogniseUserOperation(userOperationTypedData(framework, PERSON, run, `${SHOP}00`), framework)!;
    assert.equal(paid.paymaster, SHOP);
    assert.match(paid.uncounted ?? "", /paymaster/);
    const tried = recogniseUserOperation(userOperationTypedData(framework, PERSON, execute([], mode("01", "01"))), framework)!;
    assert.equal(tried.call.kind, "unreadable");
  });
});
