// The local EVM chain the end-to-end tests run against (`hardhat node`).
module.exports = { networks: { hardhat: { chainId: 31337 } } };
