// The local EVM chain (`hardhat node`) npm start brings and the tests run against; HARDHAT_CHAIN_ID gives a second chain its own id.
// A transaction that reverts is mined and answered with its hash, as a real node does (hardhat would report an error).
// Blocks mined within one second share its timestamp: otherwise each transaction mined the instant it arrives moves the
// chain's clock a second on, and after a few hundred it runs minutes ahead of the wall clock a payment's validity is
// set by (as @x402/evm's client sets an EIP-3009 authorization's validBefore), where a real chain's keeps to it.
module.exports = {
  networks: {
    hardhat: {
      chainId: Number(process.env.HARDHAT_CHAIN_ID ?? 31337),
      throwOnTransactionFailures: false,
      allowBlocksWithSameTimestamp: true,
    },
  },
};
