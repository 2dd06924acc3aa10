// Calls that the DeleGator (MetaMask's Delegation Framework 1.3.0, the code an allowance gives a wallet by EIP-7702) runs
// from an account: `execute` on the account itself (ERC-7579 modes, or one Execution), `executeFromExecutor`, and
// `redeemDelegations` (on the DelegationManager, or on the account, which forwards it). Their inner executions are read
// here, so that the approval page says what runs and the policy counts what it sends; a shape that cannot be read
// exactly is named with why, never passed as a call that sends nothing. Pure and browser-safe.
import { EIP7702StatelessDeleGator } from "@metamask/delegation-abis";
import {
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  hexToBigInt,
  size,
  slice,
  toFunctionSelector,
  type AbiFunction,
  type AbiParameter,
  type Address,
  type Hex,
} from "viem";

/** One call the account makes: to `target`, sending `value` wei, with `callData`. */
export type Execution = { target: Address; value: bigint; callData: Hex };

/**
 * Executions that run from one account: the one that makes this call (`delegator` null: the wallet itself), or the
 * root delegator of the delegations redeemed, of which there are `delegations`.
 */
export type Run = { delegator: Address | null; delegations: number; executions: Execution[] };

export type DeleGatorCall =
  { kind: "runs"; functionName: string; runs: Run[] } | { kind: "unreadable"; functionName: string; reason: string };

// The DelegationManager's redeemDelegations and enableDelegation have the account's signatures: one ABI reads both.
const ABI = EIP7702StatelessDeleGator;
const EXECUTIONS = ["execute", "executeFromExecutor", "redeemDelegations"];
const selectorsOf = (names: string[]) =>
  new Set(
    ABI.filter((item): item is Extract<typeof item, AbiFunction> => item.type === "function" && names.includes(item.name)).map((item) =>
      toFunctionSelector(item),
    ),
  );
/** What it moves cannot be counted: a delegation enabled again, the account's deposit at the EntryPoint. */
const UNCOUNTED: Record<string, string> = {
  enableDelegation: "it enables a delegation again, whose use cannot be counted here",
  withdrawDeposit: "it withdraws this wallet's deposit at the EntryPoint",
};
const SELECTORS = selectorsOf([...EXECUTIONS, ...Object.keys(UNCOUNTED)]);
/** The account's own functions that run or change what others may run: inside an execution they are not followed. */
const NESTED = selectorsOf([...EXECUTIONS, ...Object.keys(UNCOUNTED), "disableDelegation"]);

/** A struct of the account's ABI, as an array: a batch's executions (ERC-7579), a redemption's delegations. */
function arrayOf(functionName: "execute" | "disableDelegation"): readonly AbiParameter[] {
  const [struct] = ABI.find(
    (item): item is Extract<typeof item, AbiFunction> => item.type === "function" && item.name === functionName && item.inputs.length === 1,
  )!.inputs;
  return [{ ...struct, type: "tuple[]" }];
}
/** Execution[]: (target, value, callData). */
export const EXECUTION_ARRAY = arrayOf("execute");
/** Delegation[]: (delegate, delegator, authority, caveats (enforcer, terms, args)[], salt, signature). */
export const DELEGATION_ARRAY = arrayOf("disableDelegation");

/** Why a shape is not read; the caller says whose call it is. */
class Unreadable extends Error {}

/**
 * The executions `data` runs through the DeleGator, or why they cannot be read (also for the account's functions that
 * move what cannot be counted); null when `data` is none of these functions. `guarded`: the framework's
 * DelegationManager and EntryPoint, which no execution may call (what they would do is not an execution of the account's).
 */
export function decodeDeleGatorCall(data: Hex, guarded: readonly Address[] = []): DeleGatorCall | null {
  if (!SELECTORS.has(data.slice(0, 10).toLowerCase() as Hex)) return null;
  let functionName = "an execution";
  try {
    const decoded = decodeFunctionData({ abi: ABI, data });
    functionName = decoded.functionName;
    // Exactly as encoded, or not read: a decoder that skips bytes could be shown one thing while the chain runs another.
    if (
      encodeFunctionData({ abi: ABI, functionName: decoded.functionName, args: decoded.args } as never).toLowerCase() !== data.toLowerCase()
    )
      throw new Unreadable("its arguments are not in the standard encoding");
    const runs = runsOf(decoded.functionName, decoded.args as readonly unknown[]);
    for (const { executions } of runs) for (const execution of executions) checkInner(execution, guarded);
    return { kind: "runs", functionName, runs };
  } catch (error) {
    const reason = error instanceof Unreadable ? error.message : "its arguments do not decode";
    return { kind: "unreadable", functionName, reason };
  }
}

function runsOf(functionName: string, args: readonly unknown[]): Run[] {
  if (UNCOUNTED[functionName]) throw new Unreadable(UNCOUNTED[functionName]);
  if (functionName === "redeemDelegations") {
    const [contexts, modes, calls] = args as [readonly Hex[], readonly Hex[], readonly Hex[]];
    if (contexts.length !== modes.length || contexts.length !== calls.length)
      throw new Unreadable("its delegations, modes and executions differ in number");
    return contexts.map((context, index) => {
      const delegations = decodeAbiParameters(DELEGATION_ARRAY, context)[0] as readonly { delegator: Address }[];
      if (encodeAbiParameters(DELEGATION_ARRAY, [delegations]).toLowerCase() !== context.toLowerCase())
        throw new Unreadable("its delegations are not in the standard encoding");
      // Ordered from leaf to root: the root delegator's account runs the executions; none is the caller's own.
      const root = delegations.at(-1);
      return {
        delegator: root ? getAddress(root.delegator) : null,
        delegations: delegations.length,
        executions: executionsOf(modes[index], calls[index]),
      };
    });
  }
  if (args.length === 1) {
    const { target, value, callData } = args[0] as Execution;
    return [{ delegator: null, delegations: 0, executions: [{ target: getAddress(target), value, callData }] }];
  }
  const [mode, calldata] = args as [Hex, Hex];
  return [{ delegator: null, delegations: 0, executions: executionsOf(mode, calldata) }];
}

/** ERC-7579's ModeCode: call type, exec type, 4 unused bytes, a mode selector and its payload. */
function executionsOf(mode: Hex, calldata: Hex): Execution[] {
  const callType = mode.slice(2, 4);
  const execType = mode.slice(4, 6);
  if (callType === "ff") throw new Unreadable("it runs code by delegatecall, as the account itself, which cannot be read as calls");
  if (callType !== "00" && callType !== "01") throw new Unreadable(`its call type 0x${callType} is not a single call or a batch`);
  if (execType === "01") throw new Unreadable("it runs in try mode, where a failing call is skipped and the rest still runs");
  if (execType !== "00" || BigInt(`0x${mode.slice(6)}`) !== 0n) throw new Unreadable(`its mode ${mode} is not one this wallet reads`);
  if (callType === "00") {
    // abi.encodePacked(target, value, callData)
    if (size(calldata) < 52) throw new Unreadable("its single execution is shorter than a target and a value");
    return [
      { target: getAddress(slice(calldata, 0, 20)), value: hexToBigInt(slice(calldata, 20, 52)), callData: `0x${calldata.slice(106)}` },
    ];
  }
  const executions = decodeAbiParameters(EXECUTION_ARRAY, calldata)[0] as readonly Execution[];
  if (encodeAbiParameters(EXECUTION_ARRAY, [executions]).toLowerCase() !== calldata.toLowerCase())
    throw new Unreadable("its batch is not in the standard encoding");
  return executions.map(({ target, value, callData }) => ({ target: getAddress(target), value, callData }));
}

/** An execution that would run more executions, or change what the framework lets others run, is not followed. */
function checkInner({ target, callData }: Execution, guarded: readonly Address[]): void {
  if (guarded.some((address) => address.toLowerCase() === target.toLowerCase()))
    throw new Unreadable(`one of its executions calls the Delegation Framework's own contract ${target}`);
  if (NESTED.has(callData.slice(0, 10).toLowerCase() as Hex))
    throw new Unreadable("one of its executions runs or changes delegated executions again (nested)");
}

/** What the audit log keeps of the executions a call runs: at most this many, with how many there were in all. */
const AUDITED_EXECUTIONS = 10;

/** A DeleGator call as the audit log records it when an agent asks for it (lib/audit/describe.ts words it). */
export type AuditedRuns = {
  functionName: string;
  /** why its executions cannot be read, when they cannot */
  unreadable?: string;
  /** each execution: from whose account (null: the wallet's own), to whom, how much, and whether it calls code */
  executions?: { from: Address | null; recipient: Address; value: string; call: boolean }[];
  total?: number;
};

/**
 * What `data` runs through the DeleGator, for the audit log (null: it is no DeleGator call): the page that asks the
 * person reads the same executions, so that the log says what runs, not "a call to the wallet itself".
 */
export function auditedRuns(data: Hex, guarded: readonly Address[] = []): AuditedRuns | null {
  const call = decodeDeleGatorCall(data, guarded);
  if (!call) return null;
  if (call.kind === "unreadable") return { functionName: call.functionName, unreadable: call.reason };
  const executions = call.runs.flatMap((run) =>
    run.executions.map((execution) => ({
      from: run.delegator,
      recipient: execution.target,
      value: execution.value.toString(),
      call: execution.callData !== "0x",
    })),
  );
  return { functionName: call.functionName, executions: executions.slice(0, AUDITED_EXECUTIONS), total: executions.length };
}
