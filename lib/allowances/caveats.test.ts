import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createAllowedTargetsTerms, createNonceTerms } from "@metamask/delegation-core";
import { parseEther, parseUnits } from "viem";
import {
  AllowanceSpecError,
  DAY,
  delegationsFor,
  pays,
  perPaymentOf,
  readDelegation,
  specFromChoices,
  UnreadableDelegationError,
  type AllowanceSpec,
} from "./caveats";
import { frameworkOn } from "@/lib/wallet/delegation-framework";
import { address, NOW, testFramework } from "./framework.fixture";
import { allowanceCaps, allowanceSummary, anyPayeeWarning, describeDelegation, periodWords } from "./wording";

const framework = testFramework;

const PERSON = address(0xaaaa);
const DELEGATE = address(0xbbbb);
const SHOP = address(0xcccc);
const TOKEN = address(0xdddd);

function spec(overrides: Partial<AllowanceSpec> = {}): AllowanceSpec {
  return {
    chainId: 31337,
    delegator: PERSON,
    delegate: DELEGATE,
    native: parseEther("0.01"),
    tokens: [{ address: TOKEN, perPeriod: parseUnits("10", 18) }],
    recipients: [SHOP],
    periodSeconds: DAY,
    startsAt: NOW,
    expiresAt: NOW + 7 * DAY,
    transactions: 3,
    overLimit: "ask",
    ...overrides,
  };
}

describe("allowance caveats", () => {
  it("makes one coin delegation and one per token and recipient, each with a salt of its own", () => {
    const delegations = delegationsFor(spec({ recipients: [SHOP, address(0xeeee)] }), framework, NOW);
    assert.equal(delegations.length, 3);
    assert.equal(new Set(delegations.map((delegation) => delegation.salt)).size, 3);
    assert.ok(
      delegations.every((delegation) => delegation.salt !== 0n && delegation.delegator === PERSON && delegation.delegate === DELEGATE),
    );
  });

  it("reads back exactly what was asked", () => {
    const [coin, token] = delegationsFor(spec(), framework, NOW);
    assert.deepEqual(readDelegation(framework, coin), {
      token: null,
      perPeriod: parseEther("0.01"),
      periodSeconds: DAY,
      startsAt: NOW,
      recipients: [SHOP],
      anyPayee: false,
      expiresAt: NOW + 7 * DAY,
      notBefore: 0,
      transactions: 3,
    });
    const meaning = readDelegation(framework, token);
    assert.equal(meaning.token, TOKEN);
    assert.deepEqual(meaning.recipients, [SHOP]);
    assert.equal(meaning.perPeriod, parseUnits("10", 18));
  });

  it("says the fixed period plainly", () => {
    const [coin, token] = delegationsFor(spec(), framework, NOW);
    assert.equal(
      describeDelegation(readDelegation(framework, coin), { symbol: "ETH", decimals: 18 }, NOW),
      `Up to 0.01 ETH per day, the day starting at 14:05 UTC, to ${SHOP}; at most 3 payments in all; until 2026-12-02 14:05 UTC.`,
    );
    assert.match(describeDelegation(readDelegation(framework, token), { symbol: "TKN", decimals: 18 }, NOW), /^Up to 10 TKN per day/);
    const later = readDelegation(framework, delegationsFor(spec({ startsAt: NOW + DAY }), framework, NOW)[0]);
    assert.match(describeDelegation(later, { symbol: "ETH", decimals: 18 }, NOW), /, from 2026-11-26 14:05 UTC;/);
    assert.equal(periodWords(7 * DAY, NOW), "per week, the week starting on Wednesday at 14:05 UTC");
    assert.equal(periodWords(2 * DAY, NOW), "per 2 days, periods counted from 2026-11-25 14:05 UTC");
  });

  it("refuses an empty caveat list, an unknown enforcer, a repeated or a missing one", () => {
    const [coin] = delegationsFor(spec(), framework, NOW);
    assert.throws(() => readDelegation(framework, { ...coin, caveats: [] }), UnreadableDelegationError);
    const unknown = { enforcer: address(999), terms: createNonceTerms({ nonce: "0x01" }), args: "0x" as const };
    assert.throws(() => readDelegation(framework, { ...coin, caveats: [...coin.caveats, unknown] }), /Unknown caveat enforcer/);
    assert.throws(() => readDelegation(framework, { ...coin, caveats: [...coin.caveats, coin.caveats[0]] }), /appears twice/);
    assert.throws(
      () =>
        readDelegation(framework, {
          ...coin,
          caveats: coin.caveats.filter((c) => c.enforcer !== framework.caveatEnforcers.LimitedCallsEnforcer),
        }),
      /lacks LimitedCallsEnforcer/,
    );
    assert.throws(() => readDelegation(framework, { ...coin, authority: `0x${"11".repeat(32)}` }), /signed by the person directly/);
  });

  it("refuses a token delegation that could call something else than its token", () => {
    const [, token] = delegationsFor(spec(), framework, NOW);
    const widened = token.caveats.map((c) =>
      c.enforcer === framework.caveatEnforcers.AllowedTargetsEnforcer
        ? { ...c, terms: createAllowedTargetsTerms({ targets: [TOKEN, SHOP] }) }
        : c,
    );
    assert.throws(() => readDelegation(framework, { ...token, caveats: widened }), /only its token/);
  });

  it("refuses specs the chain could not hold to", () => {
    assert.throws(() => delegationsFor(spec({ expiresAt: NOW + 31 * DAY }), framework, NOW), /within 30 days/);
    assert.throws(() => delegationsFor(spec({ recipients: [] }), framework, NOW), AllowanceSpecError);
    assert.throws(() => delegationsFor(spec({ native: 0n }), framework, NOW), /more than 0/);
    assert.throws(() => delegationsFor(spec({ transactions: 0 }), framework, NOW), /between 1/);
    assert.throws(() => delegationsFor(spec({ native: undefined, tokens: [] }), framework, NOW), /coin or at least one token/);
  });

  it("reads the person's units: amounts with the asset's decimals, 7 days by default and at most 30", () => {
    const choices = {
      chainId: 31337,
      delegator: PERSON,
      delegate: DELEGATE,
      coin: "0.01",
      tokens: [{ address: TOKEN, amount: "10", decimals: 6 }],
      recipients: [SHOP],
      period: "day" as const,
      transactions: 3,
      overLimit: "refuse" as const,
    };
    const spec = specFromChoices(choices, NOW);
    assert.equal(spec.native, parseEther("0.01"));
    assert.deepEqual(spec.tokens, [{ address: TOKEN, perPeriod: 10_000_000n }]);
    assert.equal(spec.anyPayee, false);
    assert.equal(spec.expiresAt, NOW + 7 * DAY);
    assert.equal(spec.periodSeconds, DAY);
    assert.equal(specFromChoices({ ...choices, expiresInDays: 30 }, NOW).expiresAt, NOW + 30 * DAY);
    assert.throws(() => specFromChoices({ ...choices, expiresInDays: 31 }, NOW), /within 30 days/);
    assert.throws(() => specFromChoices({ ...choices, coin: "0.1234567891234567891" }, NOW), /more than 18 decimals/);
    assert.throws(() => specFromChoices({ ...choices, coin: "-1" }, NOW), /not an amount/);
  });

  it("any payee: one token delegation without a recipient caveat, read back as paying anyone, the most per payment kept apart", () => {
    const anyPayee = spec({
      native: undefined,
      recipients: [],
      anyPayee: true,
      tokens: [{ address: TOKEN, perPeriod: parseUnits("5", 6), perPayment: parseUnits("1", 6) }],
    });
    const delegations = delegationsFor(anyPayee, framework, NOW);
    assert.equal(delegations.length, 1);
    const [only] = delegations;
    assert.ok(!only.caveats.some((c) => c.enforcer === framework.caveatEnforcers.AllowedCalldataEnforcer));
    // the ERC20PeriodTransfer cap, the payment count and the expiry still bind it on chain
    assert.ok(only.caveats.some((c) => c.enforcer === framework.caveatEnforcers.ERC20PeriodTransferEnforcer));
    const meaning = readDelegation(framework, only);
    assert.deepEqual(meaning, {
      token: TOKEN,
      perPeriod: 5_000_000n,
      periodSeconds: DAY,
      startsAt: NOW,
      recipients: [],
      anyPayee: true,
      expiresAt: NOW + 7 * DAY,
      notBefore: 0,
      transactions: 3,
    });
    assert.ok(pays(meaning, SHOP) && pays(meaning, address(0x1234)));
    assert.equal(pays(readDelegation(framework, delegationsFor(spec(), framework, NOW)[1]), address(0x1234)), false);
    assert.deepEqual(perPaymentOf(anyPayee), [{ token: TOKEN, max: "1000000" }]);
    assert.deepEqual(perPaymentOf(spec()), []);
  });

  it("any payee is chosen explicitly, for tokens only, each with a most per payment within its cap", () => {
    const tokens = [{ address: TOKEN, perPeriod: 5_000_000n, perPayment: 1_000_000n }];
    const any = (overrides: Partial<AllowanceSpec>) =>
      delegationsFor(spec({ native: undefined, recipients: [], anyPayee: true, tokens, ...overrides }), framework, NOW);
    assert.throws(() => any({ recipients: [SHOP] }), /names no payees/);
    assert.throws(() => any({ native: parseEther("0.01") }), /tokens only/);
    assert.throws(() => any({ tokens: [{ address: TOKEN, perPeriod: 5_000_000n }] }), /most per payment must be more than 0/);
    assert.throws(() => any({ tokens: [{ address: TOKEN, perPeriod: 5_000_000n, perPayment: 6_000_000n }] }), /no more than its amount/);
    // a most per payment never widens a payee list by itself
    assert.throws(() => delegationsFor(spec({ tokens }), framework, NOW), /goes with any payee only/);
    const choices = {
      chainId: 31337,
      delegator: PERSON,
      delegate: DELEGATE,
      tokens: [{ address: TOKEN, amount: "5", decimals: 6, perPayment: "1.5" }],
      recipients: [],
      anyPayee: true,
      period: "day" as const,
      transactions: 3,
      overLimit: "refuse" as const,
    };
    assert.deepEqual(specFromChoices(choices, NOW).tokens, [{ address: TOKEN, perPeriod: 5_000_000n, perPayment: 1_500_000n }]);
  });

  it("says what any payee means if the server were compromised, at consent and on /clients", () => {
    const meaning = readDelegation(
      framework,
      delegationsFor(
        spec({
          native: undefined,
          recipients: [],
          anyPayee: true,
          tokens: [{ address: TOKEN, perPeriod: 5_000_000n, perPayment: 1_000_000n }],
        }),
        framework,
        NOW,
      )[0],
    );
    const usdc = { symbol: "USDC", decimals: 6 };
    assert.equal(
      describeDelegation(meaning, usdc, NOW, 1_000_000n),
      "Up to 5 USDC per day, the day starting at 14:05 UTC, to any payee, at most 1 USDC per payment; at most 3 payments in all; " +
        "until 2026-12-02 14:05 UTC. Any payee: Agent Wallet refuses a payment above 1 USDC, but if Agent Wallet's server were " +
        "compromised, anyone could be paid, up to 5 USDC a day and no more. " +
        "Paid APIs (x402) are paid from an account of the agent's own, filled from this allowance one payment at a time: only " +
        "the server checks whom it pays, and a compromised server could also take what it holds for payments on their way.",
    );
    const parts = [{ meanings: [meaning], asset: usdc, money: "$5.00", perPaymentMax: 1_000_000n }];
    assert.equal(
      allowanceSummary(parts, (payee) => payee),
      "5 USDC (≈ $5.00) a day to any payee, at most 1 USDC per payment, for 7 days, at most 3 payments in all. Stop it any time on " +
        "Clients.",
    );
    // the warning stands apart from the sentence, so the card can show it as one
    assert.equal(
      anyPayeeWarning(parts),
      "If Agent Wallet's server were compromised, anyone could be paid, up to 5 USDC (≈ $5.00) a day and no more. " +
        "Paid APIs (x402) are paid from an account of the agent's own, filled from this allowance one payment at a time: only " +
        "the server checks whom it pays, and a compromised server could also take what it holds for payments on their way.",
    );
    assert.equal(anyPayeeWarning([{ ...parts[0], meanings: [{ ...meaning, anyPayee: false }] }]), null);
    // a float chosen: the warning names it (decision 0038)
    assert.match(
      anyPayeeWarning([{ ...parts[0], float: 2_000_000n }])!,
      / A compromised server could take the float, up to 2 USDC, and what is left of the cap\.$/,
    );
    // the agent's own key spends it: no server checks it, a stolen key is what the person must know of
    assert.equal(
      anyPayeeWarning(parts, "agent"),
      "The agent's own key may pay anyone, up to 5 USDC (≈ $5.00) a day and no more, with no most per payment on chain: " +
        "whoever stole that key could too. Agent Wallet's server holds no key that can pay from it.",
    );
  });

  it("keeps a float only with any payee, between the most per payment and the cap per period", () => {
    const any = (tokens: AllowanceSpec["tokens"]) => spec({ native: undefined, recipients: [], anyPayee: true, tokens });
    const float = any([{ address: TOKEN, perPeriod: 5_000_000n, perPayment: 1_000_000n, float: 2_000_000n }]);
    assert.doesNotThrow(() => delegationsFor(float, framework, NOW));
    assert.deepEqual(perPaymentOf(float), [{ token: TOKEN, max: "1000000", float: "2000000" }]);
    const choices = {
      chainId: 31337,
      delegator: PERSON,
      delegate: DELEGATE,
      tokens: [{ address: TOKEN, amount: "5", decimals: 6, perPayment: "1", float: "0.5" }],
      recipients: [],
      anyPayee: true,
      period: "day" as const,
      transactions: 3,
      overLimit: "refuse" as const,
    };
    assert.throws(() => specFromChoices(choices, NOW), /A float is at least the token's most per payment/);
    assert.throws(() => specFromChoices({ ...choices, tokens: [{ ...choices.tokens[0], float: "6" }] }, NOW), /no more than its amount/);
  });

  it("sums an allowance up in the person's words: names from the address book, the value, how long, how many payments", () => {
    const [coin] = delegationsFor(spec({ native: parseEther("0.05"), tokens: [], transactions: 5 }), framework, NOW).map((d) =>
      readDelegation(framework, d),
    );
    assert.equal(
      allowanceSummary([{ meanings: [coin], asset: { symbol: "ETH", decimals: 18 }, money: "$125.00", perPaymentMax: null }], (payee) =>
        payee === SHOP ? "Alice" : payee,
      ),
      "0.05 ETH (≈ $125.00) a day to Alice, for 7 days, at most 5 payments in all. Stop it any time on Clients.",
    );
    const two = delegationsFor(spec({ recipients: [SHOP, address(0xeeee)] }), framework, NOW).map((d) => readDelegation(framework, d));
    assert.equal(
      allowanceSummary(
        [
          { meanings: [two[0]], asset: { symbol: "ETH", decimals: 18 }, money: null, perPaymentMax: null },
          { meanings: two.slice(1), asset: { symbol: "TKN", decimals: 18 }, money: null, perPaymentMax: null },
        ],
        (payee) => (payee === SHOP ? "Alice" : payee),
      ),
      // each delegation counts its own: the coin's one for both payees, the token's one per payee
      `0.01 ETH and 10 TKN a day to Alice or ${address(0xeeee)}, for 7 days, at most 3 payments of ETH and 3 of TKN to each ` +
        "payee. Stop it any time on Clients.",
    );
    assert.equal(
      allowanceSummary(
        [{ meanings: two.slice(1), asset: { symbol: "TKN", decimals: 18 }, money: null, perPaymentMax: null }],
        (payee) => payee,
      ),
      `10 TKN a day to ${SHOP} or ${address(0xeeee)}, for 7 days, at most 3 payments to each payee. Stop it any time on Clients.`,
    );
  });

  it("on Clients, says the days a live allowance has left and not where to stop it; an ended one its whole life", () => {
    const [coin] = delegationsFor(spec({ native: parseEther("0.05"), tokens: [], transactions: 5 }), framework, NOW).map((d) =>
      readDelegation(framework, d),
    );
    const parts = [{ meanings: [coin], asset: { symbol: "ETH", decimals: 18 }, money: "$125.00", perPaymentMax: null }];
    const alice = (payee: string) => (payee === SHOP ? "Alice" : payee);
    assert.equal(
      allowanceSummary(parts, alice, { now: NOW + 60 }),
      "0.05 ETH (≈ $125.00) a day to Alice, for 7 days left, at most 5 payments in all.",
    );
    // two and a half days gone: the half day left still counts
    assert.equal(
      allowanceSummary(parts, alice, { now: NOW + 2.5 * 86_400 }),
      "0.05 ETH (≈ $125.00) a day to Alice, for 5 days left, at most 5 payments in all.",
    );
    assert.equal(
      allowanceSummary(parts, alice, { now: null }),
      "0.05 ETH (≈ $125.00) a day to Alice, for 7 days, at most 5 payments in all.",
    );
    assert.equal(allowanceCaps(parts), "0.05 ETH (≈ $125.00) a day");
  });

  it("offers the published framework only on the chains it lists, and configured addresses anywhere", () => {
    assert.equal(frameworkOn(1)?.DelegationManager, "0xdb9B1e94B5b69Df7e401DDbedE43491141047dB3");
    assert.equal(frameworkOn(1)?.implementations.EIP7702StatelessDeleGatorImpl, "0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B");
    assert.equal(frameworkOn(31337), null);
    assert.equal(frameworkOn(31337, { "31337": { DelegationManager: address(1) } }), null, "an incomplete configuration offers nothing");
  });
});
