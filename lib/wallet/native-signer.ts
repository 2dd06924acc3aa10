// The server's own keys (the relayers', the allowance delegate's) signing by libsecp256k1, the `secp256k1` package's
// build, as ./signer-recovery.ts recovers: noble's JavaScript took about half a millisecond a signature, and an
// allowance payment signs twice. libsecp256k1 signs as noble does (RFC 6979 nonces, low s), so the signatures are
// viem's own, byte for byte (native-signer.test.ts holds them so), and the hashes are the native keccak's.
import secp256k1 from "secp256k1/bindings.js";
import {
  bytesToHex,
  hashMessage,
  hashTypedData,
  hexToBytes,
  serializeSignature,
  serializeTransaction,
  type Hex,
  type Signature,
  type TransactionSerializable,
} from "viem";
import { privateKeyToAddress, toAccount, type LocalAccount } from "viem/accounts";
import { keccak256 } from "./keccak";

function signed(hash: Hex, privateKey: Uint8Array): Signature {
  const { signature, recid } = secp256k1.ecdsaSign(hexToBytes(hash), privateKey);
  return {
    r: bytesToHex(signature.subarray(0, 32)),
    s: bytesToHex(signature.subarray(32)),
    v: recid ? 28n : 27n,
    yParity: recid,
  };
}

/** An RLP string item: a single byte below 0x80 is itself, anything else (at most 55 bytes here) its length first. */
function rlpItem(bytes: Buffer): Buffer {
  if (bytes.length === 1 && bytes[0] < 0x80) return bytes;
  return Buffer.concat([Buffer.of(0x80 + bytes.length), bytes]);
}

/** A signature value as viem serializes it: big-endian without leading zero bytes (one zero byte for zero). */
function trimmed(value: Hex): Buffer {
  const bytes = Buffer.from(value.slice(2), "hex");
  const first = bytes.findIndex((byte) => byte !== 0);
  return first === -1 ? Buffer.of(0) : bytes.subarray(first);
}

/** A length as RLP writes it after a long list's header: big-endian, without leading zero bytes. */
function bigEndian(value: number): Buffer {
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex");
}

/**
 * The signed typed transaction (EIP-1559, EIP-7702) from its unsigned serialization: the same RLP list with yParity, r
 * and s appended, as viem's serializer writes it. Serializing the whole transaction again (a relayer's calldata is a
 * redemption of a kilobyte and more) was about half of the relayer's signing.
 */
function withSignature(unsigned: Hex, signature: Signature): Hex {
  const serialized = Buffer.from(unsigned.slice(2), "hex");
  const header = serialized[1];
  const fields = serialized.subarray(2 + (header > 0xf7 ? header - 0xf7 : 0));
  const appended = [rlpItem(Buffer.from(signature.yParity ? [1] : [])), rlpItem(trimmed(signature.r)), rlpItem(trimmed(signature.s))];
  const length = fields.length + appended.reduce((sum, item) => sum + item.length, 0);
  const listHeader =
    length <= 55 ? Buffer.of(0xc0 + length) : Buffer.concat([Buffer.of(0xf7 + bigEndian(length).length), bigEndian(length)]);
  return `0x${Buffer.concat([serialized.subarray(0, 1), listHeader, fields, ...appended]).toString("hex")}`;
}

/** A server key's account: viem's LocalAccount, that signs hashes too. */
export type ServerAccount = LocalAccount & { sign: NonNullable<LocalAccount["sign"]> };

/** The account of `privateKey`, as viem's privateKeyToAccount makes it, signing natively. */
export function nativeAccount(privateKey: Hex): ServerAccount {
  const key = hexToBytes(privateKey);
  const sign = (hash: Hex) => serializeSignature(signed(hash, key));
  const account = toAccount({
    address: privateKeyToAddress(privateKey),
    signMessage: async ({ message }) => sign(hashMessage(message)),
    signTypedData: async (typedData) => sign(hashTypedData(typedData)),
    // Blob transactions (sidecars) are never signed here: the relayers send calls, the delegate key signs no transaction.
    signTransaction: async (transaction, options) => {
      const serializer = options?.serializer ?? serializeTransaction;
      const unsigned = await serializer(transaction as TransactionSerializable);
      const signature = signed(keccak256(unsigned), key);
      // EIP-1559 and EIP-7702, what the relayers send; anything else viem serializes again
      const appendable = !options?.serializer && (unsigned.startsWith("0x02") || unsigned.startsWith("0x04"));
      return appendable ? withSignature(unsigned, signature) : serializer(transaction as TransactionSerializable, signature);
    },
  });
  return { ...account, sign: async ({ hash }) => sign(hash) };
}
