// What a transaction's calldata asks a token contract to do, decoded with viem's standard ABIs. Pure and
// browser-safe: the approval page describes exactly the stored calldata, and anything this module does not
// recognise stays an unknown call shown with its selector and raw bytes.
import { decodeFunctionData, erc20Abi, erc721Abi, parseAbi, type Address, type Hex } from "viem";

/** The ERC-1155 transfers; its setApprovalForAll has the same signature as ERC-721's. */
const erc1155Abi = parseAbi([
  "function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)",
  "function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] values, bytes data)",
]);

// ERC-20's approve and transferFrom share their selectors with ERC-721's (the third argument is then a token
// id): the calldata alone cannot tell them apart, so they decode once and the contract decides (token-metadata).
const TOKEN_ABI = [...erc20Abi, ...erc721Abi, ...erc1155Abi];

export type DecodedCall =
  | { kind: "none" }
  | { kind: "transfer"; to: Address; amount: bigint }
  | { kind: "approve"; spender: Address; amount: bigint }
  | { kind: "transferFrom"; from: Address; to: Address; amount: bigint }
  | { kind: "safeTransferFrom"; from: Address; to: Address; tokenId: bigint }
  | { kind: "safeTransferFrom1155"; from: Address; to: Address; id: bigint; amount: bigint }
  | { kind: "safeBatchTransferFrom"; from: Address; to: Address; ids: readonly bigint[]; amounts: readonly bigint[] }
  | { kind: "setApprovalForAll"; operator: Address; approved: boolean }
  | { kind: "unknown"; selector: Hex; data: Hex };

/** At or above this, an allowance is as good as unlimited (tokens treat 2^256 − 1 as "never decreases"). */
const UNLIMITED_FROM = 2n ** 255n;

/** True for an amount nobody means literally: ≥ 2^255, or the largest value of its declared unsigned type. */
export function isUnlimitedAmount(amount: bigint, bits = 256): boolean {
  return amount >= UNLIMITED_FROM || amount === 2n ** BigInt(bits) - 1n;
}

export function decodeCall(data: Hex): DecodedCall {
  if (data === "0x") return { kind: "none" };
  let decoded;
  try {
    decoded = decodeFunctionData({ abi: TOKEN_ABI, data });
  } catch {
    return { kind: "unknown", selector: data.slice(0, 10) as Hex, data };
  }
  const { functionName } = decoded;
  const args = decoded.args as readonly unknown[];
  const address = (index: number) => args[index] as Address;
  const integer = (index: number) => args[index] as bigint;
  switch (functionName) {
    case "transfer":
      return { kind: "transfer", to: address(0), amount: integer(1) };
    case "approve":
      return { kind: "approve", spender: address(0), amount: integer(1) };
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
      return { kind: "unknown", selector: data.slice(0, 10) as Hex, data };
  }
}
