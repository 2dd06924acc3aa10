// Who signed an approval: viem's recoverMessageAddress, recoverTypedDataAddress and recoverTransactionAddress with
// the secp256k1 recovery done by libsecp256k1 (the `secp256k1` package's build, shipped in it) instead of noble's
// JavaScript, which was about a third of an approval's CPU, and the address hashed by the native keccak
// (./keccak.ts). What is accepted is viem's: the same hash, a 65-byte signature whose last byte is 0, 1, 27 or 28,
// r and s in [1, n) with a high s recovered as noble recovers it (libsecp256k1's recovery does not normalize s
// either), a transaction's v or yParity read as viem reads it.
import {
  checksumAddress,
  hashMessage,
  hashTypedData,
  hexToBigInt,
  hexToBytes,
  hexToNumber,
  isHex,
  numberToBytes,
  parseTransaction,
  serializeTransaction,
  size,
  toHex,
  type Address,
  type Hex,
  type SignableMessage,
  type TransactionSerialized,
  type TypedDataDefinition,
} from "viem";
import secp256k1 from "secp256k1/bindings.js";
import { keccak256 } from "./keccak";

/** viem's reading of a signature's last byte or a transaction's yParity/v, as a recovery id. */
function recoveryBit(yParityOrV: number): 0 | 1 {
  if (yParityOrV === 0 || yParityOrV === 1) return yParityOrV;
  if (yParityOrV === 27) return 0;
  if (yParityOrV === 28) return 1;
  throw new Error("Invalid yParityOrV value");
}

/** viem's publicKeyToAddress: the last 20 bytes of the hash of the uncompressed key without its 0x04 prefix. */
function signerOf(hash: Hex, compact: Uint8Array, recovery: 0 | 1): Address {
  const publicKey = secp256k1.ecdsaRecover(compact, recovery, hexToBytes(hash), false);
  return checksumAddress(`0x${keccak256(publicKey.subarray(1)).slice(26)}`);
}

/** The signer of a 65-byte signature (r, s, then v) over `hash`, read as viem's recoverPublicKey reads it. */
export function recoverHashSigner(hash: Hex, signature: Hex): Address {
  const hex = isHex(signature) ? signature : toHex(signature);
  if (size(hex) !== 65) throw new Error("invalid signature length");
  const recovery = recoveryBit(hexToNumber(`0x${hex.slice(130)}`));
  return signerOf(hash, hexToBytes(`0x${hex.substring(2, 130)}`), recovery);
}

export function recoverMessageSigner(message: SignableMessage, signature: Hex): Address {
  return recoverHashSigner(hashMessage(message), signature);
}

export function recoverTypedDataSigner(typedData: TypedDataDefinition, signature: Hex): Address {
  return recoverHashSigner(hashTypedData(typedData), signature);
}

/** The signer of a serialized signed transaction, over its signing hash (the transaction without its signature). */
export function recoverTransactionSigner(serialized: TransactionSerialized): Address {
  const transaction = parseTransaction(serialized);
  const { r, s, v, yParity } = transaction;
  if (r === undefined || s === undefined) throw new Error("unsigned transaction");
  const unsigned = serializeTransaction({
    ...transaction,
    r: undefined,
    s: undefined,
    v: undefined,
    yParity: undefined,
    sidecars: undefined,
  });
  // An EIP-155 v (chainId * 2 + 35 + yParity) carries the parity; otherwise yParity, or a legacy 27/28.
  const recovery = yParity === undefined && v !== undefined && v >= 35n ? (v % 2n === 0n ? 1 : 0) : recoveryBit(Number(yParity ?? v));
  const compact = new Uint8Array(64);
  compact.set(numberToBytes(hexToBigInt(r), { size: 32 }), 0);
  compact.set(numberToBytes(hexToBigInt(s), { size: 32 }), 32);
  return signerOf(keccak256(unsigned), compact, recovery);
}
