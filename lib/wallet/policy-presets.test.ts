import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther } from "viem";
import type { Policy } from "@/contract";
import {
  coinNote,
  contractsIn,
  customLimitsOf,
  customPolicy,
  nativeCoin,
  NO_CUSTOM_LIMITS,
  POLICY_PRESETS,
  presetOf,
  presetPolicy,
} from "./policy-presets";

const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const FRIEND = "0x000000000000000000000000000000000000bEEF";

describe("spending limit choices", () => {
  it("the presets are the documented rules", () => {
    assert.deepEqual(POLICY_PRESETS.ask.policy, {});
    assert.deepEqual(POLICY_PRESETS.small.policy, {
      native: { per_transaction: String(parseEther("0.05")), per_day: String(parseEther("0.2")) },
    });
  });

  it("the form names the configured chains' coin: the one they share, else each chain's", () => {
    const shared = nativeCoin([
      { name: "Local dev chain", symbol: "ETH" },
      { name: "Base", symbol: "ETH" },
    ]);
    assert.equal(coinNote(shared), "(ETH)");
    assert.equal(POLICY_PRESETS.small.label(shared), "Up to 0.05 ETH a transaction, 0.2 ETH a day");
    const mixed = nativeCoin([
      { name: "Local", symbol: "ETH" },
      { name: "Polygon", symbol: "POL" },
      { name: "Base", symbol: "ETH" },
    ]);
    assert.equal(coinNote(mixed), "(in each chain's coin: ETH on Local and Base, POL on Polygon)");
    assert.equal(
      POLICY_PRESETS.small.label(mixed),
      "Up to 0.05 a transaction, 0.2 a day (in each chain's coin: ETH on Local and Base, POL on Polygon)",
    );
  });

  it("an empty custom form is no rule at all; each field becomes its rule", () => {
    assert.deepEqual(customPolicy(NO_CUSTOM_LIMITS), {});
    assert.deepEqual(
      customPolicy(
        {
          ...NO_CUSTOM_LIMITS,
          perTransaction: "0.5",
          perWeek: "2",
          recipients: `${FRIEND}, ${TOKEN}`,
          chains: "1, 8453",
          contracts: `${TOKEN} 0xa9059cbb 0x095ea7b3\n${FRIEND}`,
          tokens: `31337 ${TOKEN} 1000 -\n1 ${FRIEND} - 5`,
          typedDataContracts: TOKEN,
          typedDataNames: "Permit2\nUSD Coin",
          requestsPerHour: "12",
          signMessage: false,
          noUnlimitedApprovals: true,
        },
        [
          { chainId: 31337, address: TOKEN, symbol: "TST", decimals: 0 },
          { chainId: 1, address: FRIEND, symbol: "FRN", decimals: 0 },
        ],
      ),
      {
        native: { per_transaction: String(parseEther("0.5")), per_week: String(parseEther("2")) },
        tokens: [
          { chain_id: 31337, token: TOKEN, per_transaction: "1000" },
          { chain_id: 1, token: FRIEND, per_day: "5" },
        ],
        recipients: [FRIEND, TOKEN],
        chains: [1, 8453],
        contracts: [{ address: TOKEN, selectors: ["0xa9059cbb", "0x095ea7b3"] }, { address: FRIEND }],
        no_unlimited_approvals: true,
        typed_data: { verifying_contracts: [TOKEN], names: ["Permit2", "USD Coin"] },
        sign_message: false,
        requests_per_hour: 12,
      },
    );
  });

  it("a stored policy reads back into the form that writes it again, and is recognised as its preset", () => {
    const policies: Policy[] = [
      {},
      POLICY_PRESETS.small.policy,
      { native: { per_day: "1" }, tokens: [{ chain_id: 1, token: TOKEN, per_day: "7" }], sign_message: false, requests_per_hour: 0 },
      { contracts: [{ address: TOKEN }], typed_data: { names: ["A name with spaces"] }, no_unlimited_approvals: true },
    ];
    for (const policy of policies) assert.deepEqual(customPolicy(customLimitsOf(policy)), policy);
    assert.equal(presetOf({}), "ask");
    assert.equal(presetOf(customPolicy(customLimitsOf(POLICY_PRESETS.small.policy))), "small");
    assert.equal(presetOf({ native: { per_day: "1" } }), "custom");
  });

  it("a token picked by name is capped in its own units, and reads back so when the form knows it", () => {
    const usdc = { chainId: 8453, address: TOKEN, symbol: "USDC", decimals: 6 };
    const limits = { ...NO_CUSTOM_LIMITS, tokenCaps: [{ token: usdc, perTransaction: "0.5", perDay: "" }] };
    const policy = customPolicy(limits);
    assert.deepEqual(policy.tokens, [{ chain_id: 8453, token: TOKEN, per_transaction: "500000" }]);
    assert.deepEqual(customLimitsOf(policy, [usdc]).tokenCaps, [{ token: usdc, perTransaction: "0.5", perDay: "" }]);
    assert.deepEqual(customPolicy(customLimitsOf(policy, [usdc])), policy);
    assert.throws(
      () => customPolicy({ ...limits, tokenCaps: [{ token: usdc, perTransaction: "0.0000001", perDay: "" }] }),
      /Token cap for USDC: enter an amount of USDC/,
    );
  });

  it("a token named by its contract is capped in its units as its contract describes them, exactly", () => {
    const dai = { chainId: 1, address: FRIEND, symbol: "DAI", decimals: 18 };
    const limits = { ...NO_CUSTOM_LIMITS, tokens: `1 ${FRIEND} 0.75 -\n` };
    assert.deepEqual(customPolicy(limits, [dai]).tokens, [{ chain_id: 1, token: FRIEND, per_transaction: "750000000000000000" }]);
    // more digits than a 6-decimal token has would have to be rounded: refused instead
    assert.throws(
      () => customPolicy({ ...limits, tokens: `1 ${FRIEND} 0.0000001 -` }, [{ ...dai, decimals: 6 }]),
      /enter an amount of DAI/,
    );
    // a contract the page could not read as an ERC-20 has no units: nothing is written for it
    assert.throws(() => customPolicy(limits), /Token caps: 0x0+bEEF on chain 1 is not an ERC-20 token this page could read/);
    assert.deepEqual(contractsIn(`1 ${FRIEND} 0.75 -\n8453 0x12\n`), [{ chainId: 1, address: FRIEND }]);
    // a stored cap of a token whose units the page was not told is kept as stored, never re-read in units
    const stored = { tokens: [{ chain_id: 8453, token: TOKEN, per_transaction: "500000" }] };
    assert.equal(customLimitsOf(stored).tokens, "");
    assert.deepEqual(customPolicy(customLimitsOf(stored)), stored);
  });

  it("refusing unlimited approvals goes with every preset, and a preset that refuses them is still recognised", () => {
    assert.deepEqual(presetPolicy("ask", true), { no_unlimited_approvals: true });
    assert.deepEqual(presetPolicy("ask", false), {});
    assert.deepEqual(presetPolicy("small", true), { ...POLICY_PRESETS.small.policy, no_unlimited_approvals: true });
    assert.equal(presetOf({ no_unlimited_approvals: true }), "ask");
    assert.equal(presetOf(presetPolicy("small", true)), "small");
    assert.equal(presetOf({ no_unlimited_approvals: true, sign_message: false }), "custom");
  });

  it("says which field is wrong", () => {
    assert.throws(() => customPolicy({ ...NO_CUSTOM_LIMITS, perDay: "a lot" }), /Per day: enter an amount, like 0.05/);
    assert.throws(() => customPolicy({ ...NO_CUSTOM_LIMITS, recipients: "0x1234" }), /^Error: recipients\.0: /);
    assert.throws(() => customPolicy({ ...NO_CUSTOM_LIMITS, tokens: TOKEN }), /Token caps: write/);
    assert.throws(() => customPolicy({ ...NO_CUSTOM_LIMITS, contracts: `${TOKEN} transfer` }), /contracts\.0\.selectors\.0: a 4-byte/);
    assert.throws(() => customPolicy({ ...NO_CUSTOM_LIMITS, requestsPerHour: "many" }), /requests_per_hour: /);
  });
});
