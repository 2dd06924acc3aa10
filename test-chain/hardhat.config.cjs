// The local EVM chain (`hardhat node`) npm start brings and the tests run against; HARDHAT_CHAIN_ID gives a second chain its own id.
// A transaction that reverts is mined and answered with its hash, as a real node does (hardhat would report an error).
module.exports = {
  networks: { hardhat: { chainId: Number(process.env.HARDHAT_CHAIN_ID ?? 31337), throwOnTransactionFailures: false } },
};
