// Keccak-256 by the `keccak` package's native build (the Keccak team's code, shipped in the package) for the server's
// signature checks: viem's, noble's JavaScript, takes about 20 µs a hash here, this about 3 (docs/performance.md).
// Its build alone, as for secp256k1: the package's entry falls back to JavaScript when the build is missing. The
// package's hash objects are streams, which cost more than the hash: its sponge is used as they use it, one for every
// hash, which runs start to end without yielding, so none interleave. lib/wallet/keccak.test.ts holds it to viem's.
import createKeccak from "keccak/bindings.js";
import { hexToBytes, type Hex } from "viem";

type Sponge = {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
};

const sponge = createKeccak("keccak256")._state as Sponge;

/**
 * `hex` as bytes, as viem's hexToBytes reads it: by Buffer's decoder, several times faster on a transaction's kilobytes;
 * what it reads short (an odd length, a character that is not hex) goes to viem's, which pads or throws as viem does.
 */
function bytesOfHex(hex: Hex): Uint8Array {
  const bytes = Buffer.from(hex.slice(2), "hex");
  return bytes.length * 2 === hex.length - 2 ? bytes : hexToBytes(hex);
}

/** keccak256 of `data` (hex, read as viem reads it, or bytes), as 0x-prefixed hex: viem's keccak256. */
export function keccak256(data: Hex | Uint8Array): Hex {
  const bytes = typeof data === "string" ? bytesOfHex(data) : data;
  // Keccak-256: a rate of 1088 bits, a capacity of 512, and Keccak's padding (0x01), not SHA-3's (0x06).
  sponge.initialize(1088, 512);
  sponge.absorb(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  sponge.absorbLastFewBits(0x01);
  return `0x${sponge.squeeze(32).toString("hex")}`;
}
