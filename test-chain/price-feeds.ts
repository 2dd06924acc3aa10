// Chainlink price feeds on the local chain: @chainlink/contracts' MockV3Aggregator, compiled from the package's
// Solidity source (the package ships no bytecode) and deployed with viem from the node's first funded account.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { getAddress, parseAbi, type Address } from "viem";
import type { LocalChain } from "./node";
import { deployer, mined } from "./contracts";
import { compileSolidity, type Compiled } from "./solidity";

const require = createRequire(import.meta.url);
const SOURCES = path.dirname(require.resolve("@chainlink/contracts/package.json"));
const MOCK = "src/v0.8/tests/MockV3Aggregator.sol";

let compiled: Compiled | undefined;

/** MockV3Aggregator's ABI and bytecode, compiled once per test process. */
function mockAggregator(): Compiled {
  compiled ??= compileSolidity(MOCK, fs.readFileSync(path.join(SOURCES, MOCK), "utf8"), "MockV3Aggregator", (file) =>
    fs.readFileSync(path.join(SOURCES, file), "utf8"),
  );
  return compiled;
}

/** A feed answering `answer` (an integer with `decimals` of them, e.g. 2000_00000000 with 8 for $2,000) now. */
export async function deployPriceFeed(chain: LocalChain, feed: { answer: bigint; decimals: number }): Promise<Address> {
  const { abi, bytecode } = mockAggregator();
  const wallet = await deployer(chain);
  return getAddress((await mined(chain, await wallet.deployContract({ abi, bytecode, args: [feed.decimals, feed.answer] })))!);
}

/** The feed's latest round set to `answer`, last updated at `updatedAt` (seconds since the epoch). */
export async function setRound(chain: LocalChain, feed: Address, round: { answer: bigint; updatedAt: bigint }) {
  const wallet = await deployer(chain);
  const abi = parseAbi(["function updateRoundData(uint80 roundId, int256 answer, uint256 timestamp, uint256 startedAt)"]);
  await mined(
    chain,
    await wallet.writeContract({
      address: feed,
      abi,
      functionName: "updateRoundData",
      args: [2n, round.answer, round.updatedAt, round.updatedAt],
    }),
  );
}

/** Sends `amount` of an ERC-20 that the node's first account holds to `to`. */
export async function sendToken(chain: LocalChain, token: Address, to: Address, amount: bigint) {
  const wallet = await deployer(chain);
  const abi = parseAbi(["function transfer(address to, uint256 amount) returns (bool)"]);
  await mined(chain, await wallet.writeContract({ address: token, abi, functionName: "transfer", args: [to, amount] }));
}
