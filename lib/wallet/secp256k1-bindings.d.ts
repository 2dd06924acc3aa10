// The `secp256k1` package's native build alone: its entry falls back to elliptic's JavaScript when the build is missing.
declare module "secp256k1/bindings.js" {
  const secp256k1: typeof import("secp256k1");
  export default secp256k1;
}
