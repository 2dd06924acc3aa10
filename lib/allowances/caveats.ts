// An allowance in the person's terms → the delegations the person signs, and back: a signed delegation's caveats →
// what it allows, read only from the signed fields. Browser-safe (the approval page decodes what it shows): the
// caveat terms are encoded and decoded with @metamask/delegation-core, which has no telemetry.
import {
  ROOT_AUTHORITY,
  createAllowedCalldataTerms,
  createAllowedTargetsTerms,
  createERC20TokenPeriodTransferTerms,
  createExactCalldataTerms,
  createLimitedCallsTerms,
  createNativeTokenPeriodTransferTerms,
  createTimestampTerms,
  createValueLteTerms,
  decodeAllowedCalldataTerms,
  decodeAllowedTargetsTerms,
  decodeERC20TokenPeriodTransferTerms,
  decodeExactCalldataTerms,
  decodeLimitedCallsTerms,
  decodeNativeTokenPeriodTransferTerms,
  decodeTimestampTerms,
  decodeValueLteTerms,
} from "@metamask/delegation-core";
import { bytesToHex, getAddress, pad, parseUnits, type Address, type Hex } from "viem";
import { enforcerName, type EnforcerName, type Framework } from "@/lib/wallet/delegation-framework";
import { delegationTypedData as typedDataOfDelegation } from "@/contract/delegation";

export const DAY = 86_400;
/**
 * Past this long after its end (the chain's clock may run a little off ours), an allowance's delegations are dead on
 * chain (its TimestampEnforcer): no revocation is sent for it.
 */
export const EXPIRED_MARGIN_MS = 15 * 60_000;
const DEFAULT_EXPIRY_DAYS = 7;
export const MAX_EXPIRY_DAYS = 30;
/** Caveats are ANDed, so each (token, recipient) pair needs a delegation of its own: keep the signing bounded. */
export const MAX_DELEGATIONS = 12;

export type OverLimit = "ask" | "refuse";

/** Per token of an any-payee allowance, the most one payment may be (base units, decimal): the server's limit. */
/** `float`: what the agent's account is kept topped up to (decision 0038), base units; absent: no float */
export type PerPayment = { token: Address; max: string; float?: string }[];

/** What the person chooses, amounts in base units (wei, or the token's smallest unit). */
export type AllowanceSpec = {
  chainId: number;
  /** the person's address: the delegator */
  delegator: Address;
  /** the server's delegate key's address */
  delegate: Address;
  /** per-period cap of the chain's coin; absent: none of it may be sent */
  native?: bigint;
  /** `perPayment`: with `anyPayee`, the most one payment may be, which Agent Wallet's server holds to (not the chain) */
  tokens: { address: Address; perPeriod: bigint; perPayment?: bigint; float?: bigint }[];
  /** empty with `anyPayee` */
  recipients: Address[];
  /**
   * The tokens may be paid to anyone, up to their cap per period: no recipient caveat. Chosen explicitly; the server
   * refuses any one payment above the token's `perPayment`, which no enforcer of the framework can cap on chain.
   */
  anyPayee?: boolean;
  periodSeconds: number;
  /** unix seconds: the first period starts here; later ones follow at fixed steps of periodSeconds */
  startsAt: number;
  expiresAt: number;
  /** at most this many transfers, per delegation (each asset and recipient counts on its own) */
  transactions: number;
  overLimit: OverLimit;
};

export type Caveat = { enforcer: Address; terms: Hex; args: Hex };

/** The EIP-712 message the person signs (signature empty until then). */
export type Delegation = {
  delegate: Address;
  delegator: Address;
  authority: Hex;
  caveats: Caveat[];
  salt: bigint;
  signature: Hex;
};

/** A delegation as JSON carries it (the salt, a uint256, as a decimal string): stored, and between server and page. */
export type DelegationJson = Omit<Delegation, "salt"> & { salt: string };

export function delegationToJson(delegation: Delegation): DelegationJson {
  return { ...delegation, salt: delegation.salt.toString() };
}

export function delegationFromJson(json: DelegationJson): Delegation {
  return { ...json, salt: BigInt(json.salt) };
}

export class AllowanceSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AllowanceSpecError";
  }
}

/** A random 256-bit salt: the kit's default is 0, so two equal allowances would share one hash (and one budget). */
export function randomSalt(): bigint {
  return BigInt(bytesToHex(crypto.getRandomValues(new Uint8Array(32))));
}

/** What the person chooses at consent, in their own units ("0.01" ETH, "10" of a token). */
export type AllowanceChoices = {
  chainId: number;
  delegator: Address;
  delegate: Address;
  /** decimal amount of the chain's coin per period, or absent */
  coin?: string;
  /** `perPayment`: with `anyPayee`, the most one payment may be, in the token's units */
  tokens: { address: Address; amount: string; decimals: number; perPayment?: string; float?: string }[];
  recipients: Address[];
  anyPayee?: boolean;
  period: "hour" | "day" | "week";
  /** default 7, at most 30 */
  expiresInDays?: number;
  /** unix seconds, in place of `expiresInDays`: an agent's request names the time itself (ERC-7715's expiry) */
  expiresAt?: number;
  transactions: number;
  overLimit: OverLimit;
};

const PERIOD_SECONDS = { hour: 3600, day: DAY, week: 7 * DAY } as const;
/** The shortest life an allowance may be given: less is over before a person could read it. */
const MIN_LIFE_SECONDS = 3600;

function amount(value: string, decimals: number): bigint {
  if (!/^\d+(\.\d+)?$/.test(value)) throw new AllowanceSpecError(`"${value}" is not an amount.`);
  if ((value.split(".")[1] ?? "").length > decimals) throw new AllowanceSpecError(`"${value}" has more than ${decimals} decimals.`);
  return parseUnits(value, decimals);
}

/** The spec of the person's choices, periods starting now; refused when the chain could not hold to it. */
export function specFromChoices(choices: AllowanceChoices, now: number): AllowanceSpec {
  const days = choices.expiresInDays ?? DEFAULT_EXPIRY_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_EXPIRY_DAYS)
    throw new AllowanceSpecError(`An allowance ends within ${MAX_EXPIRY_DAYS} days.`);
  const expiresAt = choices.expiresAt ?? now + days * DAY;
  if (!Number.isInteger(expiresAt) || expiresAt < now + MIN_LIFE_SECONDS || expiresAt > now + MAX_EXPIRY_DAYS * DAY)
    throw new AllowanceSpecError(`An allowance ends between an hour and ${MAX_EXPIRY_DAYS} days from now.`);
  const spec: AllowanceSpec = {
    chainId: choices.chainId,
    delegator: choices.delegator,
    delegate: choices.delegate,
    native: choices.coin === undefined ? undefined : amount(choices.coin, 18),
    tokens: choices.tokens.map((token) => ({
      address: getAddress(token.address),
      perPeriod: amount(token.amount, token.decimals),
      ...(token.perPayment !== undefined && { perPayment: amount(token.perPayment, token.decimals) }),
      ...(token.float !== undefined && { float: amount(token.float, token.decimals) }),
    })),
    recipients: choices.recipients.map((recipient) => getAddress(recipient)),
    anyPayee: choices.anyPayee ?? false,
    periodSeconds: PERIOD_SECONDS[choices.period],
    startsAt: now,
    expiresAt,
    transactions: choices.transactions,
    overLimit: choices.overLimit,
  };
  checkSpec(spec, now);
  return spec;
}

/** Refuses a spec the chain could not enforce as the person means it. */
function checkSpec(spec: AllowanceSpec, now: number): void {
  if (spec.anyPayee) {
    if (spec.recipients.length) throw new AllowanceSpecError("An allowance for any payee names no payees.");
    // the coin's delegation has no per-payment limit of the server's kind, and the issue asks it for tokens
    if (spec.native !== undefined) throw new AllowanceSpecError("Any payee is for tokens only: name the payees to allow the coin.");
    if (!spec.tokens.length) throw new AllowanceSpecError("Choose at least one token for any payee.");
    for (const token of spec.tokens) {
      if (token.perPayment === undefined || token.perPayment <= 0n)
        throw new AllowanceSpecError("With any payee, each token's most per payment must be more than 0.");
      if (token.perPayment > token.perPeriod)
        throw new AllowanceSpecError("With any payee, each token's most per payment must be no more than its amount per period.");
      // a float that cannot cover one payment answers none sooner; one above the period's cap could never be filled
      if (token.float !== undefined && (token.float < token.perPayment || token.float > token.perPeriod))
        throw new AllowanceSpecError("A float is at least the token's most per payment and no more than its amount per period.");
    }
  } else {
    if (!spec.recipients.length) throw new AllowanceSpecError("Name at least one recipient.");
    if (spec.tokens.some((token) => token.perPayment !== undefined))
      throw new AllowanceSpecError("A most per payment goes with any payee only.");
    if (spec.tokens.some((token) => token.float !== undefined)) throw new AllowanceSpecError("A float goes with any payee only.");
  }
  if (spec.native === undefined && !spec.tokens.length) throw new AllowanceSpecError("Choose the coin or at least one token.");
  if (spec.native !== undefined && spec.native <= 0n) throw new AllowanceSpecError("The amount per period must be more than 0.");
  if (spec.tokens.some((token) => token.perPeriod <= 0n))
    throw new AllowanceSpecError("Each token's amount per period must be more than 0.");
  if (new Set(spec.tokens.map((token) => token.address.toLowerCase())).size !== spec.tokens.length) {
    throw new AllowanceSpecError("Each token may appear once.");
  }
  if (!Number.isInteger(spec.transactions) || spec.transactions < 1 || spec.transactions > 10_000) {
    throw new AllowanceSpecError("The number of transactions must be between 1 and 10000.");
  }
  if (!Number.isInteger(spec.periodSeconds) || spec.periodSeconds < 60 || spec.periodSeconds > 365 * DAY) {
    throw new AllowanceSpecError("The period must be between a minute and a year.");
  }
  if (spec.expiresAt <= now || spec.expiresAt > now + MAX_EXPIRY_DAYS * DAY) {
    throw new AllowanceSpecError(`An allowance ends within ${MAX_EXPIRY_DAYS} days.`);
  }
  if (spec.startsAt > spec.expiresAt) throw new AllowanceSpecError("The allowance must start before it ends.");
  if (delegationCount(spec) > MAX_DELEGATIONS) {
    throw new AllowanceSpecError(`At most ${MAX_DELEGATIONS} asset-and-recipient pairs in one allowance.`);
  }
}

function delegationCount(spec: AllowanceSpec): number {
  return (spec.native !== undefined ? 1 : 0) + spec.tokens.length * (spec.anyPayee ? 1 : spec.recipients.length);
}

/** What the server keeps of `spec` beside the signed delegations: each token's most per payment to any payee, and its float. */
export function perPaymentOf(spec: AllowanceSpec): PerPayment {
  return spec.tokens.flatMap((token) =>
    token.perPayment === undefined
      ? []
      : [{ token: token.address, max: token.perPayment.toString(), ...(token.float !== undefined && { float: token.float.toString() }) }],
  );
}

/** Whether a delegation's signed caveats let it pay `recipient`. */
export function pays(meaning: DelegationMeaning, recipient: Address): boolean {
  return meaning.anyPayee || meaning.recipients.includes(recipient);
}

function caveat(framework: Framework, name: EnforcerName, terms: Hex): Caveat {
  return { enforcer: framework.caveatEnforcers[name], terms, args: "0x" };
}

/**
 * The delegations that enforce `spec`, unsigned: one for the coin (all recipients in one AllowedTargets), and one per
 * token and recipient (AllowedCalldata pins the transfer's recipient, and several of it would all have to hold at once);
 * for any payee, one per token without AllowedCalldata (its ERC20PeriodTransfer still allows only `transfer` of the
 * token, up to the cap).
 */
export function delegationsFor(spec: AllowanceSpec, framework: Framework, now: number, salt: () => bigint = randomSalt): Delegation[] {
  checkSpec(spec, now);
  const common = (extra: Caveat[]): Delegation => ({
    delegate: getAddress(spec.delegate),
    delegator: getAddress(spec.delegator),
    authority: ROOT_AUTHORITY as Hex,
    caveats: [
      ...extra,
      caveat(framework, "TimestampEnforcer", createTimestampTerms({ afterThreshold: 0, beforeThreshold: spec.expiresAt })),
      caveat(framework, "LimitedCallsEnforcer", createLimitedCallsTerms({ limit: spec.transactions })),
    ],
    salt: salt(),
    signature: "0x",
  });
  const delegations: Delegation[] = [];
  if (spec.native !== undefined) {
    delegations.push(
      common([
        caveat(framework, "AllowedTargetsEnforcer", createAllowedTargetsTerms({ targets: spec.recipients.map((to) => getAddress(to)) })),
        caveat(framework, "ExactCalldataEnforcer", createExactCalldataTerms({ calldata: "0x" })),
        caveat(
          framework,
          "NativeTokenPeriodTransferEnforcer",
          createNativeTokenPeriodTransferTerms({ periodAmount: spec.native, periodDuration: spec.periodSeconds, startDate: spec.startsAt }),
        ),
      ]),
    );
  }
  for (const token of spec.tokens) {
    for (const recipient of spec.anyPayee ? [null] : spec.recipients) {
      delegations.push(
        common([
          caveat(framework, "AllowedTargetsEnforcer", createAllowedTargetsTerms({ targets: [getAddress(token.address)] })),
          caveat(framework, "ValueLteEnforcer", createValueLteTerms({ maxValue: 0n })),
          // transfer(address to, uint256): the recipient is the 32-byte word after the 4-byte selector
          ...(recipient === null
            ? []
            : [
                caveat(
                  framework,
                  "AllowedCalldataEnforcer",
                  createAllowedCalldataTerms({ startIndex: 4, value: pad(getAddress(recipient)) }),
                ),
              ]),
          caveat(
            framework,
            "ERC20PeriodTransferEnforcer",
            createERC20TokenPeriodTransferTerms({
              tokenAddress: getAddress(token.address),
              periodAmount: token.perPeriod,
              periodDuration: spec.periodSeconds,
              startDate: spec.startsAt,
            }),
          ),
        ]),
      );
    }
  }
  return delegations;
}

/** What one signed delegation allows, from its caveats alone. */
export type DelegationMeaning = {
  /** null: the chain's coin */
  token: Address | null;
  perPeriod: bigint;
  periodSeconds: number;
  startsAt: number;
  /** empty when `anyPayee` */
  recipients: Address[];
  /** a token delegation without a recipient caveat: it pays anyone, up to its cap */
  anyPayee: boolean;
  /** unix seconds; the delegation is void from this time on */
  expiresAt: number;
  /** unix seconds; 0 when it is valid at once */
  notBefore: number;
  transactions: number;
};

export class UnreadableDelegationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnreadableDelegationError";
  }
}

/**
 * Decodes the caveats of an allowance delegation, refusing anything that is not exactly one of the shapes
 * `delegationsFor` makes: an enforcer we do not know, an empty list, a repeated enforcer, a missing limit. Whatever
 * is accepted is fully described by the returned meaning.
 */
export function readDelegation(framework: Framework, delegation: Pick<Delegation, "caveats" | "authority">): DelegationMeaning {
  if (delegation.authority.toLowerCase() !== ROOT_AUTHORITY.toLowerCase()) {
    throw new UnreadableDelegationError("An allowance is signed by the person directly, not passed on from another delegation.");
  }
  return readCaveats(framework, delegation.caveats);
}

/**
 * The caveats of an allowance's shape, whoever signed them: the person's own delegation (readDelegation), or an
 * agent's slice of it passed on to another key (lib/allowances/slices.ts), which carries the same caveats, narrower.
 */
export function readCaveats(framework: Framework, caveats: Delegation["caveats"]): DelegationMeaning {
  if (!caveats.length) throw new UnreadableDelegationError("A delegation without caveats would allow anything: refused.");
  const terms = new Map<EnforcerName, Hex>();
  for (const { enforcer, terms: value } of caveats) {
    const name = enforcerName(framework, enforcer);
    if (!name) throw new UnreadableDelegationError(`Unknown caveat enforcer ${enforcer}: refused.`);
    if (terms.has(name)) throw new UnreadableDelegationError(`The caveat ${name} appears twice: refused.`);
    terms.set(name, value);
  }
  const need = (name: EnforcerName): Hex => {
    const value = terms.get(name);
    if (!value) throw new UnreadableDelegationError(`The delegation lacks ${name}: refused.`);
    return value;
  };
  const timestamp = decodeTimestampTerms(need("TimestampEnforcer"));
  if (!timestamp.beforeThreshold) throw new UnreadableDelegationError("The delegation never expires: refused.");
  const common = {
    expiresAt: timestamp.beforeThreshold,
    notBefore: timestamp.afterThreshold,
    transactions: decodeLimitedCallsTerms(need("LimitedCallsEnforcer")).limit,
  };
  const targets = decodeAllowedTargetsTerms(need("AllowedTargetsEnforcer")).targets.map((target) => getAddress(target));
  const shape = [...terms.keys()].sort().join(",");
  if (terms.has("NativeTokenPeriodTransferEnforcer")) {
    const expected = [
      "AllowedTargetsEnforcer",
      "ExactCalldataEnforcer",
      "LimitedCallsEnforcer",
      "NativeTokenPeriodTransferEnforcer",
      "TimestampEnforcer",
    ];
    if (shape !== expected.join(",")) throw new UnreadableDelegationError(`Unexpected caveats for a coin allowance (${shape}): refused.`);
    if (decodeExactCalldataTerms(need("ExactCalldataEnforcer")).calldata !== "0x") {
      throw new UnreadableDelegationError("A coin allowance must carry no call data: refused.");
    }
    const period = decodeNativeTokenPeriodTransferTerms(need("NativeTokenPeriodTransferEnforcer"));
    return {
      token: null,
      perPeriod: period.periodAmount,
      periodSeconds: period.periodDuration,
      startsAt: period.startDate,
      recipients: targets,
      anyPayee: false,
      ...common,
    };
  }
  const anyPayee = !terms.has("AllowedCalldataEnforcer");
  const expected = [
    ...(anyPayee ? [] : ["AllowedCalldataEnforcer"]),
    "AllowedTargetsEnforcer",
    "ERC20PeriodTransferEnforcer",
    "LimitedCallsEnforcer",
    "TimestampEnforcer",
    "ValueLteEnforcer",
  ];
  if (shape !== expected.join(",")) throw new UnreadableDelegationError(`Unexpected caveats for a token allowance (${shape}): refused.`);
  const period = decodeERC20TokenPeriodTransferTerms(need("ERC20PeriodTransferEnforcer"));
  const token = getAddress(period.tokenAddress);
  if (targets.length !== 1 || targets[0] !== token)
    throw new UnreadableDelegationError("A token allowance may call only its token: refused.");
  if (decodeValueLteTerms(need("ValueLteEnforcer")).maxValue !== 0n)
    throw new UnreadableDelegationError("A token allowance must send no coin: refused.");
  const ofToken = {
    token,
    perPeriod: period.periodAmount,
    periodSeconds: period.periodDuration,
    startsAt: period.startDate,
    ...common,
  };
  if (anyPayee) return { ...ofToken, recipients: [], anyPayee: true };
  const calldata = decodeAllowedCalldataTerms(need("AllowedCalldataEnforcer"));
  if (calldata.startIndex !== 4 || calldata.value.length !== 66 || !calldata.value.startsWith("0x000000000000000000000000")) {
    throw new UnreadableDelegationError("A token allowance must pin the transfer's recipient: refused.");
  }
  return { ...ofToken, recipients: [getAddress(`0x${calldata.value.slice(26)}`)], anyPayee: false };
}

/** The EIP-712 typed data of a delegation, as the DelegationManager on `chainId` verifies it: what the person signs. */
export function delegationTypedData(framework: Framework, chainId: number, delegation: Delegation) {
  return typedDataOfDelegation(framework.DelegationManager, chainId, delegation);
}
