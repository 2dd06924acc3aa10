// Native builds alone: each package's entry falls back to JavaScript (elliptic's, its own) when its build is missing.
declare module "secp256k1/bindings.js" {
  const secp256k1: typeof import("secp256k1");
  export default secp256k1;
}

/** A hash object, a stream around the build's sponge (`_state`). */
declare module "keccak/bindings.js" {
  export default function createKeccak(algorithm: "keccak256"): { _state: unknown };
}
