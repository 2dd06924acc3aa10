// The local test chain: a hardhat node (chain 31337) with MetaMask's Delegation Framework, Circle's USDC contract and
// Chainlink price feeds that answer test prices, and the settings that point the app at it. `npm start` runs one when
// no CHAINS is configured, `npm run dev:chain` runs one alone, and the tests start the app against one
// (docs/decisions/0023-npm-start-brings-a-test-chain.md). It keeps no state: each start is a fresh chain.
import type { Address } from "viem";
import { localRelayerKey } from "@/lib/allowances/settings";
import { startChain, type LocalChain } from "./node";
import { deployFramework, frameworksSetting } from "./delegation-framework";
import { deployFiatToken } from "./fiat-token";
import { deployPriceFeed } from "./price-feeds";

/** Test prices, in USD with Chainlink's 8 decimals: round numbers, so that nobody takes them for a market's. */
const TEST_PRICES = { ether: 2000_00000000n, usdc: 1_00000000n };

/** A test price never goes stale: the mock feed is written once, at deployment, and the chain lives as long as the app. */
const TEST_PRICE_MAX_AGE_SECONDS = 365 * 24 * 3600;

export type TestChain = LocalChain & {
  usdc: Address;
  /** The app's settings for this chain: CHAINS, TEST_CHAIN, ALLOWANCE_FRAMEWORKS, ALLOWANCE_RELAYERS, PRICE_FEEDS. */
  settings: Record<string, string>;
};

/** Starts the node (on `port`, else a free one) and deploys everything onto it; about 10–20 s on two cores. */
export async function startTestChain(options: { port?: number } = {}): Promise<TestChain> {
  const chain = await startChain({ port: options.port });
  try {
    // The framework comes from hardhat's account 18, the rest from account 0: the two run side by side.
    const [framework, { usdc, faucet, feeds }] = await Promise.all([
      deployFramework(chain),
      (async () => {
        const token = await deployFiatToken(chain);
        const native = await deployPriceFeed(chain, { answer: TEST_PRICES.ether, decimals: 8 });
        const usdcFeed = await deployPriceFeed(chain, { answer: TEST_PRICES.usdc, decimals: 8 });
        return { usdc: token.address, faucet: token.minter, feeds: { native, tokens: { [token.address]: usdcFeed } } };
      })(),
    ]);
    const settings = {
      CHAINS: JSON.stringify([{ id: chain.chainId, name: "Local test chain", rpcUrl: chain.rpcUrl, symbol: "ETH", tokens: [usdc] }]),
      TEST_CHAIN: JSON.stringify({ chainId: chain.chainId, faucet, usdc }),
      ALLOWANCE_FRAMEWORKS: frameworksSetting(chain, framework),
      // npm start runs in production, where no chain has a relayer unless configured: hardhat's account 19 pays here,
      // and 18 for revocations, which so never wait behind a payment's nonce.
      ALLOWANCE_RELAYERS: JSON.stringify({ [chain.chainId]: localRelayerKey() }),
      ALLOWANCE_REVOCATION_RELAYERS: JSON.stringify({ [chain.chainId]: localRelayerKey("revocations") }),
      PRICE_FEEDS: JSON.stringify({ [chain.chainId]: feeds }),
      PRICE_MAX_AGE_SECONDS: String(TEST_PRICE_MAX_AGE_SECONDS),
    };
    return { ...chain, usdc, settings };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}
