// EIP-3009's TransferWithAuthorization struct, as FiatToken (USDC, EURC) hashes it: what the person signs for a one-tap
// x402 payment, what an allowance's agent account signs, and what an agent's own key signs through the SDK. One
// definition for the server and the SDK.

export const TRANSFER_WITH_AUTHORIZATION = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
] as const;
