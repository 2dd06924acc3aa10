// The local EVM chain the end-to-end tests run against (`hardhat node`); HARDHAT_CHAIN_ID gives a second chain its own id.
module.exports = { networks: { hardhat: { chainId: Number(process.env.HARDHAT_CHAIN_ID ?? 31337) } } };
