/** EIP-712 typed data of an order, as an agent would send it (with the domain type listed). */
export function orderTypedData(appName: string, memo: string) {
  return {
    domain: { name: appName, version: "1", chainId: 31337, verifyingContract: "0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC" },
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
        { name: "verifyingContract", type: "address" },
      ],
      Order: [
        { name: "buyer", type: "address" },
        { name: "amount", type: "uint256" },
        { name: "memo", type: "string" },
      ],
    },
    primaryType: "Order",
    message: { buyer: "0x000000000000000000000000000000000000bEEF", amount: "42", memo },
  };
}
