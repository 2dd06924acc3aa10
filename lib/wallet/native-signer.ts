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
      return serializer(transaction as TransactionSerializable, signed(keccak256(unsigned), key));
    },
  });
  return { ...account, sign: async ({ hash }) => sign(hash) };
}
