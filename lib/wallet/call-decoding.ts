// What a transaction's calldata asks a token contract to do, decoded with viem's standard ABIs. Pure and
// browser-safe: the approval page describes exactly the stored calldata, and anything this module does not
// recognise stays an unknown call shown with its selector and raw bytes.
import { decodeFunctionData, erc20Abi, erc721Abi, parseAbi, toFunctionSelector, type Address, type Hex } from "viem";

/** The ERC-1155 transfers; its setApprovalForAll has the same signature as ERC-721's. */
const erc1155Abi = parseAbi([
  "function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)",
  "function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] values, bytes data)",
]);

/** Token moves beyond the standards' own: OpenZeppelin's allowance increase, ERC-677, and Permit2's allowance. */
const extraTokenAbi = parseAbi([
  "function increaseAllowance(address spender, uint256 addedValue)",
  "function transferAndCall(address to, uint256 value, bytes data)",
  "function approve(address token, address spender, uint160 amount, uint48 expiration)",
]);

/** Batches of calls to the contract itself (OpenZeppelin's and Uniswap's multicall). */
const multicallAbi = parseAbi(["function multicall(bytes[] data)", "function multicall(uint256 deadline, bytes[] data)"]);

/** Every batch this module knows of, decodable or not: Multicall3's calls run as Multicall3, to any target. */
const batchAbi = parseAbi([
  "function multicall(bytes[] data)",
  "function multicall(uint256 deadline, bytes[] data)",
  "function aggregate((address target, bytes callData)[] calls)",
  "function tryAggregate(bool requireSuccess, (address target, bytes callData)[] calls)",
  "function blockAndAggregate((address target, bytes callData)[] calls)",
  "function tryBlockAndAggregate(bool requireSuccess, (address target, bytes callData)[] calls)",
  "function aggregate3((address target, bool allowFailure, bytes callData)[] calls)",
  "function aggregate3Value((address target, bool allowFailure, uint256 value, bytes callData)[] calls)",
]);
const BATCH_SELECTORS = new Set(batchAbi.map((item) => toFunctionSelector(item)));

// ERC-20's approve and transferFrom share their selectors with ERC-721's (the third argument is then a token
// id): the calldata alone cannot tell them apart, so they decode once and the contract decides (token-metadata).
const TOKEN_ABI = [...erc20Abi, ...erc721Abi, ...erc1155Abi, ...extraTokenAbi, ...multicallAbi];

/** A call on a token (or on Permit2) that this module puts in words. */
export type TokenCall =
  | { kind: "transfer"; to: Address; amount: bigint }
  | { kind: "transferAndCall"; to: Address; amount: bigint; data: Hex }
  | { kind: "increaseAllowance"; spender: Address; amount: bigint }
  | { kind: "permit2Approve"; token: Address; spender: Address; amount: bigint; expiration: bigint }
  | { kind: "approve"; spender: Address; amount: bigint }
  | { kind: "transferFrom"; from: Address; to: Address; amount: bigint }
  | { kind: "safeTransferFrom"; from: Address; to: Address; tokenId: bigint }
  | { kind: "safeTransferFrom1155"; from: Address; to: Address; id: bigint; amount: bigint }
  | { kind: "safeBatchTransferFrom"; from: Address; to: Address; ids: readonly bigint[]; amounts: readonly bigint[] }
  | { kind: "setApprovalForAll"; operator: Address; approved: boolean };

export type DecodedCall =
  | { kind: "none" }
  | TokenCall
  /** A multicall to the contract itself whose every call is a token call (else it is unknown). */
  | { kind: "multicall"; calls: TokenCall[] }
  | { kind: "unknown"; selector: Hex; data: Hex };

/**
 * At or above this, an allowance is as good as unlimited: no token has 2^128 base units in circulation, and an
 * agent asking for 2^200 means "everything" as surely as one asking for 2^256 − 1. Permit2's uint160 allowances
 * reach it too (2^(160−32)).
 */
const UNLIMITED_FROM = 2n ** 128n;

/** True for an amount nobody means literally. */
export function isUnlimitedAmount(amount: bigint): boolean {
  return amount >= UNLIMITED_FROM;
}

/** True when the calldata is a batch of calls (a multicall or a Multicall3 aggregate), decodable or not. */
export function isBatch(data: Hex): boolean {
  return BATCH_SELECTORS.has(data.slice(0, 10).toLowerCase() as Hex);
}

export function decodeCall(data: Hex): DecodedCall {
  if (data === "0x") return { kind: "none" };
  const call = decodeOne(data);
  if (call.kind !== "batch") return call;
  const calls = call.calls.map(decodeOne);
  return calls.every((inner): inner is TokenCall => inner.kind !== "unknown" && inner.kind !== "batch")
    ? { kind: "multicall", calls }
    : unknown(data);
}

/** One call; a multicall's calls are left encoded (the caller decodes them one level down, no deeper). */
function decodeOne(data: Hex): TokenCall | Extract<DecodedCall, { kind: "unknown" }> | { kind: "batch"; calls: readonly Hex[] } {
  let decoded;
  try {
    decoded = decodeFunctionData({ abi: TOKEN_ABI, data });
  } catch {
    return unknown(data);
  }
  const { functionName } = decoded;
  const args = decoded.args as readonly unknown[];
  const address = (index: number) => args[index] as Address;
  const integer = (index: number) => args[index] as bigint;
  switch (functionName) {
    case "transfer":
      return { kind: "transfer", to: address(0), amount: integer(1) };
    case "transferAndCall":
      return { kind: "transferAndCall", to: address(0), amount: integer(1), data: args[2] as Hex };
    case "increaseAllowance":
      return { kind: "increaseAllowance", spender: address(0), amount: integer(1) };
    case "approve":
      return args.length === 4
        ? { kind: "permit2Approve", token: address(0), spender: address(1), amount: integer(2), expiration: BigInt(args[3] as number) }
        : { kind: "approve", spender: address(0), amount: integer(1) };
    case "multicall":
      return { kind: "batch", calls: args.at(-1) as readonly Hex[] };
    case "transferFrom":
      return { kind: "transferFrom", from: address(0), to: address(1), amount: integer(2) };
    case "safeTransferFrom":
      return args.length === 5
        ? { kind: "safeTransferFrom1155", from: address(0), to: address(1), id: integer(2), amount: integer(3) }
        : { kind: "safeTransferFrom", from: address(0), to: address(1), tokenId: integer(2) };
    case "safeBatchTransferFrom":
      return { kind: "safeBatchTransferFrom", from: address(0), to: address(1), ids: args[2] as bigint[], amounts: args[3] as bigint[] };
    case "setApprovalForAll":
      return { kind: "setApprovalForAll", operator: address(0), approved: args[1] as boolean };
    default:
      // A read-only function (balanceOf, symbol…) sent as a transaction: nothing this screen can put in words.
      return unknown(data);
  }
}

const unknown = (data: Hex) => ({ kind: "unknown" as const, selector: data.slice(0, 10) as Hex, data });
