// Typed data that lets the DeleGator move a wallet's funds without a transaction of the wallet's: a `Delegation` (the
// DelegationManager's EIP-712 struct) and a `PackedUserOperation` (the DeleGator's EIP-712 form of an EntryPoint v0.7
// user operation, lib/allowances/revocation-operation.ts). Recognised by their exact declared types, as permits are;
// each caveat read by its enforcer on the configured framework, and what the signature could ever move bounded from
// the caveats alone, so that the policy can count it and the approval page can say it. Pure and browser-safe.
import {
  ANY_BENEFICIARY,
  ROOT_AUTHORITY,
  decodeAllowedCalldataTerms,
  decodeAllowedTargetsTerms,
  decodeERC20TokenPeriodTransferTerms,
  decodeExactCalldataTerms,
  decodeExactExecutionTerms,
  decodeLimitedCallsTerms,
  decodeNativeTokenPeriodTransferTerms,
  decodeTimestampTerms,
  decodeValueLteTerms,
} from "@metamask/delegation-core";
import { getAddress, hexToBigInt, isAddressEqual, slice, type Address, type Hex, type TypedDataDefinition } from "viem";
import { enforcerName, frameworkContracts, type EnforcerName, type Framework } from "@/lib/wallet/delegation-framework";
import { decodeDeleGatorCall, type DeleGatorCall, type Execution } from "./deleGator-calls";
import { hasShape, type TypedDataShape } from "./permits";

const DELEGATION: TypedDataShape = {
  primaryType: "Delegation",
  types: {
    Delegation: "delegate:address,delegator:address,authority:bytes32,caveats:Caveat[],salt:uint256",
    Caveat: "enforcer:address,terms:bytes",
  },
};
const USER_OPERATION: TypedDataShape = {
  primaryType: "PackedUserOperation",
  types: {
    PackedUserOperation:
      "sender:address,nonce:uint256,initCode:bytes,callData:bytes,accountGasLimits:bytes32,preVerificationGas:uint256," +
      "gasFees:bytes32,paymasterAndData:bytes,entryPoint:address",
  },
};

/** What one caveat allows, read by its enforcer (amounts in wei or the token's smallest unit, times in unix seconds). */
export type CaveatTerms =
  | { name: "TimestampEnforcer"; after: number; before: number }
  | { name: "LimitedCallsEnforcer"; limit: number }
  | { name: "AllowedTargetsEnforcer"; targets: Address[] }
  | { name: "AllowedCalldataEnforcer"; startIndex: number; value: Hex }
  | { name: "ExactCalldataEnforcer"; calldata: Hex }
  | { name: "ValueLteEnforcer"; maxValue: bigint }
  | { name: "NativeTokenPeriodTransferEnforcer"; amount: bigint; seconds: number; start: number }
  | { name: "ERC20PeriodTransferEnforcer"; token: Address; amount: bigint; seconds: number; start: number }
  | { name: "ExactExecutionEnforcer"; execution: Execution };

/**
 * A caveat as signed, its enforcer's name on the framework (null: one this wallet does not know) and what it means
 * (null: an unknown enforcer, or terms it cannot read).
 */
export type Caveat = { enforcer: Address; terms: Hex; name: EnforcerName | null; read: CaveatTerms | null };

/** What a signature could ever move: an amount the policy counts, or why none can be counted. */
export type Bound<T> = { counted: T } | { uncounted: string };

export type TokenAmount = { token: Address; amount: bigint };

export type DelegationReading = {
  delegate: Address;
  /** the open delegate: whoever holds the signed delegation may redeem it */
  anyone: boolean;
  delegator: Address;
  /** null: the delegator's own (root) authority; else the hash of the delegation it passes on */
  passesOn: Hex | null;
  caveats: Caveat[];
  /** the most of the chain's coin and of tokens it could ever move from the delegator's account */
  native: Bound<bigint>;
  tokens: Bound<TokenAmount[]>;
};

export type UserOperationReading = {
  sender: Address;
  nonce: bigint;
  entryPoint: Address;
  /** what its callData runs on the sender's account */
  call: DeleGatorCall;
  /** the most the sender pays the EntryPoint for gas, in wei (0 with a paymaster) */
  gas: bigint;
  paymaster: Address | null;
  /** why what it costs the sender cannot be counted (a paymaster's terms, code deployed first); null when it can */
  uncounted: string | null;
};

type Values = Record<string, unknown>;

/** The terms of a caveat by its enforcer's name; null when they do not decode as that enforcer reads them. */
function termsOf(name: CaveatTerms["name"], terms: Hex): CaveatTerms | null {
  try {
    switch (name) {
      case "TimestampEnforcer": {
        const { afterThreshold, beforeThreshold } = decodeTimestampTerms(terms);
        return { name, after: afterThreshold, before: beforeThreshold };
      }
      case "LimitedCallsEnforcer":
        return { name, limit: decodeLimitedCallsTerms(terms).limit };
      case "AllowedTargetsEnforcer":
        return { name, targets: decodeAllowedTargetsTerms(terms).targets.map((target) => getAddress(target)) };
      case "AllowedCalldataEnforcer": {
        const { startIndex, value } = decodeAllowedCalldataTerms(terms);
        return { name, startIndex, value: value as Hex };
      }
      case "ExactCalldataEnforcer":
        return { name, calldata: decodeExactCalldataTerms(terms).calldata as Hex };
      case "ValueLteEnforcer":
        return { name, maxValue: decodeValueLteTerms(terms).maxValue };
      case "NativeTokenPeriodTransferEnforcer": {
        const { periodAmount, periodDuration, startDate } = decodeNativeTokenPeriodTransferTerms(terms);
        return { name, amount: periodAmount, seconds: periodDuration, start: startDate };
      }
      case "ERC20PeriodTransferEnforcer": {
        const { tokenAddress, periodAmount, periodDuration, startDate } = decodeERC20TokenPeriodTransferTerms(terms);
        return { name, token: getAddress(tokenAddress), amount: periodAmount, seconds: periodDuration, start: startDate };
      }
      case "ExactExecutionEnforcer": {
        const { target, value, callData } = decodeExactExecutionTerms(terms).execution;
        return { name, execution: { target: getAddress(target), value, callData: callData as Hex } };
      }
    }
  } catch {
    // Terms the enforcer itself would refuse (a wrong length, a number past what can be counted): read as unknown.
    return null;
  }
}

/** The delegation these typed data sign, read with the framework's enforcers (none known without one); null: no delegation. */
export function recogniseDelegation(typedData: TypedDataDefinition, framework: Framework | null): DelegationReading | null {
  if (!hasShape(typedData, DELEGATION)) return null;
  const message = typedData.message as Values;
  const delegator = getAddress(message.delegator as string);
  const delegate = getAddress(message.delegate as string);
  const authority = (message.authority as Hex).toLowerCase() as Hex;
  const caveats = (message.caveats as { enforcer: string; terms: Hex }[]).map(({ enforcer, terms }) => {
    const name = framework && enforcerName(framework, enforcer);
    return { enforcer: getAddress(enforcer), terms, name, read: name ? termsOf(name, terms) : null };
  });
  const passesOn = authority === ROOT_AUTHORITY.toLowerCase() ? null : authority;
  return {
    delegate,
    anyone: isAddressEqual(delegate, ANY_BENEFICIARY),
    delegator,
    passesOn,
    caveats,
    ...boundsOf(caveats, framework, delegator, passesOn),
  };
}

/** What a delegation could move: nothing is counted without caveats, the framework to read them, or the root authority. */
function boundsOf(caveats: Caveat[], framework: Framework | null, delegator: Address, passesOn: Hex | null) {
  const none = (reason: string) => ({ native: { uncounted: reason }, tokens: { uncounted: reason } });
  if (!caveats.length) return none("it has no caveats, so it allows anything");
  if (!framework) return none("no Delegation Framework is configured for its chain, so its caveats cannot be read");
  if (passesOn) return none("it passes on a delegation this wallet received, whose limits are set by delegations not shown here");
  return bounds(
    caveats.flatMap((caveat) => caveat.read ?? []),
    [delegator, framework.DelegationManager, framework.EntryPoint],
  );
}

/** The caveats of one kind, read. */
function all<N extends CaveatTerms["name"]>(read: CaveatTerms[], name: N): Extract<CaveatTerms, { name: N }>[] {
  return read.filter((caveat): caveat is Extract<CaveatTerms, { name: N }> => caveat.name === name);
}

const smallest = (values: bigint[]): bigint | null => (values.length ? values.reduce((a, b) => (b < a ? b : a)) : null);

/**
 * The most a delegation with these caveats could ever move. Caveats all hold at once, so any one of them bounds it, and
 * one this wallet does not read can only narrow it further. Each redemption runs one call (the enforcers that bound
 * amounts refuse batches); the coin is bounded by what a call may send times the calls allowed (LimitedCalls), or by a
 * period's amount times the periods before its end (Timestamp); tokens only by ERC20PeriodTransfer, or by call data
 * that moves none. Nothing is bounded while a call could reach the account's own code or the framework (`guarded`):
 * an execute on itself would move anything.
 */
function bounds(read: CaveatTerms[], guarded: Address[]): Pick<DelegationReading, "native" | "tokens"> {
  const reaches = (target: Address) => guarded.some((address) => isAddressEqual(address, target));
  const plain = all(read, "ExactCalldataEnforcer").some((caveat) => caveat.calldata === "0x");
  const exact = all(read, "ExactExecutionEnforcer").map((caveat) => caveat.execution);
  const tokenPeriods = all(read, "ERC20PeriodTransferEnforcer");
  const confined =
    plain ||
    tokenPeriods.some((caveat) => !reaches(caveat.token)) ||
    exact.some((execution) => !reaches(execution.target) || execution.callData === "0x") ||
    all(read, "AllowedTargetsEnforcer").some((caveat) => !caveat.targets.some(reaches));
  if (!confined) {
    const reason =
      "its calls could reach this wallet's own code (an execute on itself) or the Delegation Framework's contracts, and " +
      "through them move anything: no caveat limits its targets (AllowedTargets) or call data (ExactCalldata, ExactExecution)";
    return { native: { uncounted: reason }, tokens: { uncounted: reason } };
  }
  const calls = smallest(all(read, "LimitedCallsEnforcer").map((caveat) => BigInt(caveat.limit)));
  const ends = all(read, "TimestampEnforcer");
  const before = smallest(ends.flatMap((caveat) => (caveat.before ? [BigInt(caveat.before)] : [])));
  const after = ends.reduce((latest, caveat) => (BigInt(caveat.after) > latest ? BigInt(caveat.after) : latest), 0n);
  /** How many periods of `seconds` from `start` the delegation is valid in: each may be spent whole. */
  const periods = (seconds: number, start: number) => {
    // The enforcers refuse a period of no length, or no start: nothing passes them.
    if (!seconds || !start) return 0n;
    if (before === null) return null;
    const from = after > BigInt(start) ? after : BigInt(start);
    if (before <= from) return 0n;
    const index = (at: bigint) => (at - BigInt(start)) / BigInt(seconds);
    return index(before - 1n) - index(from) + 1n;
  };
  /** At most `perCall` a call, and at most each period's amount in each period. */
  const lifetime = (perCall: bigint | null, windows: { amount: bigint; seconds: number; start: number }[]) => {
    if (perCall === 0n) return 0n;
    return smallest([
      ...(calls !== null && perCall !== null ? [calls * perCall] : []),
      ...windows.flatMap((window) => {
        const count = periods(window.seconds, window.start);
        return count === null ? [] : [count * window.amount];
      }),
    ]);
  };
  const nativePeriods = all(read, "NativeTokenPeriodTransferEnforcer");
  const perCall = smallest([
    ...all(read, "ValueLteEnforcer").map((caveat) => caveat.maxValue),
    ...nativePeriods.map((caveat) => caveat.amount),
    ...exact.map((execution) => execution.value),
  ]);
  const coin = lifetime(perCall, nativePeriods);
  const native: Bound<bigint> =
    coin !== null
      ? { counted: coin }
      : {
          uncounted:
            perCall === null
              ? "no caveat limits the coin each call may send (ValueLte, NativeTokenPeriodTransfer, ExactExecution)"
              : "its limit on the coin has no end: it needs a call limit (LimitedCalls) or an end (Timestamp)",
        };
  if (plain || exact.some((execution) => execution.callData === "0x")) return { native, tokens: { counted: [] } };
  const tokens = new Set(tokenPeriods.map((caveat) => caveat.token));
  // Each call must pass every caveat: transfers of two different tokens at once pass none.
  if (tokens.size > 1) return { native, tokens: { counted: [] } };
  if (tokens.size === 0) {
    return {
      native,
      tokens: {
        uncounted:
          "no caveat limits which tokens it may move and how many (ERC20PeriodTransfer), " +
          "nor keeps its calls free of call data (ExactCalldata)",
      },
    };
  }
  const amount = lifetime(smallest(tokenPeriods.map((caveat) => caveat.amount)), tokenPeriods);
  return {
    native,
    tokens:
      amount === null
        ? { uncounted: "its limit on tokens has no end: it needs a call limit (LimitedCalls) or an end (Timestamp)" }
        : { counted: [{ token: tokenPeriods[0].token, amount }] },
  };
}

/** Two 128-bit integers packed in a bytes32, high then low (ERC-4337 v0.7's gas limits and fees). */
function unpack(word: Hex): [bigint, bigint] {
  return [hexToBigInt(slice(word, 0, 16)), hexToBigInt(slice(word, 16, 32))];
}

/** The user operation these typed data sign, with what its callData runs; null: no user operation. */
export function recogniseUserOperation(typedData: TypedDataDefinition, framework: Framework | null): UserOperationReading | null {
  if (!hasShape(typedData, USER_OPERATION)) return null;
  const message = typedData.message as Values;
  return readUserOperation(message, getAddress(message.entryPoint as string), framework);
}

/**
 * A PackedUserOperation (ERC-4337 v0.7) for `entryPoint`, as typed data sign it or `handleOps` submits it: what its
 * callData runs on the sender's account, and the most the sender pays for its gas.
 */
export function readUserOperation(operation: Values, entryPoint: Address, framework: Framework | null): UserOperationReading {
  const [verificationGas, callGas] = unpack(operation.accountGasLimits as Hex);
  const [, maxFeePerGas] = unpack(operation.gasFees as Hex);
  const paymasterAndData = operation.paymasterAndData as Hex;
  // Its first 20 bytes name the paymaster; shorter data names none, and the EntryPoint refuses it.
  const paymaster = paymasterAndData.length >= 42 ? getAddress(slice(paymasterAndData, 0, 20)) : null;
  const callData = operation.callData as Hex;
  const guarded = [entryPoint, ...frameworkContracts(framework)];
  return {
    sender: getAddress(operation.sender as string),
    nonce: BigInt(operation.nonce as string | bigint),
    entryPoint,
    call: decodeDeleGatorCall(callData, guarded) ?? {
      kind: "unreadable",
      functionName: `the function ${callData.slice(0, 10)}`,
      reason: "its call is none of the DeleGator's executions",
    },
    // ERC-4337 v0.7's prefund without a paymaster: every gas limit at the highest fee, taken from the account.
    gas:
      paymasterAndData === "0x" ? (verificationGas + callGas + BigInt(operation.preVerificationGas as string | bigint)) * maxFeePerGas : 0n,
    paymaster,
    uncounted:
      operation.initCode !== "0x"
        ? "it deploys code first (initCode), which cannot be read"
        : paymasterAndData !== "0x"
          ? `a paymaster${paymaster ? ` (${paymaster})` : ""} pays its gas on terms this wallet cannot read`
          : null,
  };
}
