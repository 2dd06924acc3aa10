// Test funds on the app's own local test chain (npm start with no CHAINS, test-chain/index.ts): the node's faucet
// account sends test ETH and mints test USDC. The node signs for that account itself (hardhat unlocks it), so the app
// holds no key; on any other chain there is no faucet, and the request is refused.
import { z } from "zod";
import { encodeFunctionData, parseAbi, parseEther, parseUnits, toHex, type Address, type Hex } from "viem";
import { config } from "@/lib/config";
import { db } from "@/lib/db";
import { AppError, NotFoundError } from "@/lib/http/errors";
import { onChain } from "./chains";

/** What one tap gives: enough for a few payments and an allowance's worth of tests, not a fortune. */
const TEST_FUNDS = { ether: "1", usdc: "100" } as const;

export const testFundsSchema = z.object({ chainId: z.number().int().positive() });

class NotTestChainError extends AppError {
  constructor(chainId: number) {
    super(
      "not_test_chain",
      `Chain ${chainId} is not this app's local test chain: test funds exist only there, and coins elsewhere are real`,
      400,
    );
  }
}

const mintAbi = parseAbi(["function mint(address to, uint256 amount) returns (bool)"]);

/** Sends the wallet `credentialId` of `userId` TEST_FUNDS on the local test chain; answers once both are mined. */
export async function addTestFunds(userId: string, credentialId: string, { chainId }: z.infer<typeof testFundsSchema>) {
  const testChain = config().testChain;
  if (testChain?.chainId !== chainId) throw new NotTestChainError(chainId);
  const wallet = await db().credential.findFirst({ where: { id: credentialId, userId }, select: { address: true } });
  if (!wallet) throw new NotFoundError("The wallet");
  const to = wallet.address as Address;
  const send = (transaction: { to: Address; value?: bigint; data?: Hex }) =>
    onChain(chainId, async (client) => {
      const hash = await client.request({
        method: "eth_sendTransaction" as never,
        params: [{ from: testChain.faucet, to: transaction.to, value: toHex(transaction.value ?? 0n), data: transaction.data }] as never,
      });
      const receipt = await client.waitForTransactionReceipt({ hash: hash as Hex });
      if (receipt.status !== "success") throw new AppError("test_funds_failed", `The test chain refused the transfer (${hash})`, 502);
    });
  // One after the other: both come from the faucet, whose nonce the node assigns in order.
  await send({ to, value: parseEther(TEST_FUNDS.ether) });
  await send({
    to: testChain.usdc,
    data: encodeFunctionData({ abi: mintAbi, functionName: "mint", args: [to, parseUnits(TEST_FUNDS.usdc, 6)] }),
  });
  return { ether: TEST_FUNDS.ether, usdc: TEST_FUNDS.usdc };
}
