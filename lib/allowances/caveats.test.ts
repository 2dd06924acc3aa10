import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createAllowedTargetsTerms, createNonceTerms } from "@metamask/delegation-core";
import { parseEther, parseUnits } from "viem";
import {
  AllowanceSpecError,
  DAY,
  delegationsFor,
  readDelegation,
  specFromChoices,
  UnreadableDelegationError,
  type AllowanceSpec,
} from "./caveats";
import { frameworkOn } from "@/lib/wallet/delegation-framework";
import { address, NOW, testFramework } from "./framework.fixture";
import { describeDelegation, periodWords } from "./wording";

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
    assert.equal(spec.expiresAt, NOW + 7 * DAY);
    assert.equal(spec.periodSeconds, DAY);
    assert.equal(specFromChoices({ ...choices, expiresInDays: 30 }, NOW).expiresAt, NOW + 30 * DAY);
    assert.throws(() => specFromChoices({ ...choices, expiresInDays: 31 }, NOW), /within 30 days/);
    assert.throws(() => specFromChoices({ ...choices, coin: "0.1234567891234567891" }, NOW), /more than 18 decimals/);
    assert.throws(() => specFromChoices({ ...choices, coin: "-1" }, NOW), /not an amount/);
  });

  it("offers the published framework only on the chains it lists, and configured addresses anywhere", () => {
    assert.equal(frameworkOn(1)?.DelegationManager, "0xdb9B1e94B5b69Df7e401DDbedE43491141047dB3");
    assert.equal(frameworkOn(1)?.implementations.EIP7702StatelessDeleGatorImpl, "0x63c0c19a282a1B52b07dD5a65b58948A07DAE32B");
    assert.equal(frameworkOn(31337), null);
    assert.equal(frameworkOn(31337, { "31337": { DelegationManager: address(1) } }), null, "an incomplete configuration offers nothing");
  });
});
