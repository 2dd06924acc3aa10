// An EIP-2612 Permit as an agent asks for its signature, for the tests and the bench: the token is the domain's
// contract, on the domain's chain; the other fields are the message's, in the decimal strings agents send.
export function eip2612Permit({
  token,
  owner,
  spender,
  value,
  chainId = 31337,
  tokenName = "Test Token",
  nonce = "0",
  deadline = "1900000000",
}: {
  token: string;
  owner: string;
  spender: string;
  value: string;
  chainId?: number;
  tokenName?: string;
  nonce?: string;
  deadline?: string;
}) {
  return {
    domain: { name: tokenName, version: "1", chainId, verifyingContract: token },
    types: {
      Permit: [
        { name: "owner", type: "address" },
        { name: "spender", type: "address" },
        { name: "value", type: "uint256" },
        { name: "nonce", type: "uint256" },
        { name: "deadline", type: "uint256" },
      ],
    },
    primaryType: "Permit",
    message: { owner, spender, value, nonce, deadline },
  };
}
