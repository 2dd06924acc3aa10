import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { encodeFunctionData, erc20Abi, erc721Abi, maxUint256, parseAbi, parseUnits, type Address } from "viem";
import type { LocalChain } from "../support/chain";
import type { Person } from "../support/consent";
import { deployErc1155, deployErc20, deployErc721 } from "../support/contracts";
import { signingAgent } from "../support/signing-agent";
import type { RequestView } from "@/contract";
import { eip2612Permit } from "@/lib/wallet/permit.fixture";

type ToolResult = { isError?: boolean; structuredContent?: unknown; content?: { type: string; text?: string }[] };

const erc1155Abi = parseAbi([
  "function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)",
  "function balanceOf(address account, uint256 id) view returns (uint256)",
]);
const newAddress = () => privateKeyToAccount(generatePrivateKey()).address;

/** The approval page's details: every field of what is signed, apart from the one-sentence summary. */
const details = (page: Page) => page.getByRole("region", { name: "Details" });

describe(
  "contract calls: the approval page shows the call in the person's terms, and it runs on a real chain",
  { timeout: 300_000 },
  () => {
    const suite = signingAgent({ email: "tokens@example.com", agentName: "Token Agent" });
    const ask = (tool: string, args: Record<string, unknown>) => suite.ask(tool, args);
    let chain: LocalChain;
    let person: Person;
    let agent: Client;
    let wallet: { id: string; address: Address };
    let token: Address;
    let pets: Address;
    let items: Address;
    const sendTransaction = (to: Address, data?: `0x${string}`) =>
      ask("send_transaction", { chain_id: 31337, to, value: "0", ...(data ? { data } : {}) });

    /** The person approves on the page already open; the agent then sees the request completed with a mined transaction. */
    async function approveAndSettle(request: RequestView) {
      await person.page.getByRole("button", { name: "Approve with passkey" }).click();
      await person.page.getByRole("status").filter({ hasText: "Approved and sent" }).waitFor();
      const done = (await agent.callTool({ name: "get_request", arguments: { request_id: request.request_id } })) as ToolResult;
      const view = done.structuredContent as RequestView;
      assert.equal(view.status, "completed");
      const receipt = await chain.client.getTransactionReceipt({ hash: view.tx_hash as `0x${string}` });
      assert.equal(receipt.status, "success");
      const transaction = await chain.client.getTransaction({ hash: view.tx_hash as `0x${string}` });
      assert.equal(transaction.value, 0n, "a 0-value transaction was signed and broadcast");
    }

    before(async () => {
      ({ chain, person, agent, wallet } = suite);
      token = await deployErc20(chain, { name: "Test Token", symbol: "TST", supply: parseUnits("1000", 18), holder: wallet.address });
      pets = await deployErc721(chain, { name: "Test Pets", symbol: "PET", holders: [wallet.address, wallet.address] });
      items = await deployErc1155(chain, { id: 3n, amount: 10n, holder: wallet.address });
    });

    it("an ERC-20 transfer (value 0) is shown in tokens, approved with the passkey, and moves exactly that amount", async () => {
      const recipient = newAddress();
      const amount = parseUnits("12.5", 18);
      const request = await sendTransaction(
        token,
        encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [recipient, amount] }),
      );
      const { page } = person;
      await page.goto(request.approval_url);
      await details(page).getByText("Transfer 12.5 TST").waitFor();
      await details(page).getByText(`(raw integer ${amount})`).waitFor();
      await details(page).getByText(recipient).waitFor();
      await details(page).getByText("Local dev chain (31337)").waitFor();
      assert.equal(await page.getByRole("alert").filter({ hasText: "Unlimited" }).count(), 0, "a plain amount carries no warning");
      await approveAndSettle(request);
      assert.equal(
        await chain.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [recipient] }),
        amount,
      );
    });

    it("an approve of the maximum uint256 shows the unlimited-approval warning before it is approved", async () => {
      const spender = newAddress();
      const request = await sendTransaction(
        token,
        encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, maxUint256] }),
      );
      const { page } = person;
      await page.goto(request.approval_url);
      await details(page).getByText("Allow spending of unlimited TST").waitFor();
      await page
        .getByRole("alert")
        .filter({ hasText: `Unlimited approval: ${spender} could take all your TST` })
        .waitFor();
      await page.getByRole("checkbox", { name: /^I understand/ }).check();
      await approveAndSettle(request);
      const allowance = await chain.client.readContract({
        address: token,
        abi: erc20Abi,
        functionName: "allowance",
        args: [wallet.address, spender],
      });
      assert.equal(allowance, maxUint256);
    });

    it("an approve from 2^128 is called unlimited, and an increaseAllowance is read, both completing on the chain", async () => {
      const spender = newAddress();
      const request = await sendTransaction(
        token,
        encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [spender, 2n ** 128n] }),
      );
      const { page } = person;
      await page.goto(request.approval_url);
      await details(page).getByText("Allow spending of unlimited TST").waitFor();
      await details(page)
        .getByText(`(raw integer ${2n ** 128n})`)
        .waitFor();
      await page
        .getByRole("alert")
        .filter({ hasText: `Unlimited approval: ${spender}` })
        .waitFor();
      await page.getByRole("checkbox", { name: /^I understand/ }).check();
      await approveAndSettle(request);
      const increase = encodeFunctionData({
        abi: parseAbi(["function increaseAllowance(address spender, uint256 addedValue) returns (bool)"]),
        args: [spender, parseUnits("5", 18)],
      });
      const more = await sendTransaction(token, increase);
      await page.goto(more.approval_url);
      await details(page).getByText("Allow spending of 5 TST more").waitFor();
      await approveAndSettle(more);
      const allowance = await chain.client.readContract({
        address: token,
        abi: erc20Abi,
        functionName: "allowance",
        args: [wallet.address, spender],
      });
      assert.equal(allowance, 2n ** 128n + parseUnits("5", 18));
    });

    it("a 0-value plain transfer (no data) can be approved", async () => {
      const recipient = newAddress();
      const request = await sendTransaction(recipient);
      await person.page.goto(request.approval_url);
      await details(person.page).getByText("none (a plain transfer)").waitFor();
      await details(person.page).getByText("0 ETH", { exact: true }).waitFor();
      await approveAndSettle(request);
    });

    it("an ERC-721 transfer is shown decoded (collection, token id, recipient) and completes", async () => {
      const recipient = newAddress();
      const data = encodeFunctionData({ abi: erc721Abi, functionName: "safeTransferFrom", args: [wallet.address, recipient, 1n] });
      const request = await sendTransaction(pets, data);
      const { page } = person;
      await page.goto(request.approval_url);
      await details(page).getByText("Transfer Test Pets (PET) #1").waitFor();
      const summary = page.locator("dl.summary");
      assert.equal(await summary.locator("dt", { hasText: "Collection" }).locator("+ dd").innerText(), `Test Pets (PET) ${pets}`);
      assert.equal(await summary.locator("dt", { hasText: "Token id" }).locator("+ dd").innerText(), "1");
      assert.equal(await summary.locator("dt", { hasText: "Recipient" }).locator("+ dd").innerText(), recipient);
      await approveAndSettle(request);
      assert.equal(await chain.client.readContract({ address: pets, abi: erc721Abi, functionName: "ownerOf", args: [1n] }), recipient);
    });

    it("an ERC-1155 transfer is shown with its token id and amount and completes", async () => {
      const recipient = newAddress();
      const data = encodeFunctionData({
        abi: erc1155Abi,
        functionName: "safeTransferFrom",
        args: [wallet.address, recipient, 3n, 4n, "0x"],
      });
      const request = await sendTransaction(items, data);
      await person.page.goto(request.approval_url);
      await details(person.page).getByText("Transfer 4 of an ERC-1155 collection #3").waitFor();
      await approveAndSettle(request);
      assert.equal(
        await chain.client.readContract({ address: items, abi: erc1155Abi, functionName: "balanceOf", args: [recipient, 3n] }),
        4n,
      );
    });

    it("setApprovalForAll(…, true) warns that the operator gets every token of the collection", async () => {
      const operator = newAddress();
      const data = encodeFunctionData({ abi: erc721Abi, functionName: "setApprovalForAll", args: [operator, true] });
      const request = await sendTransaction(pets, data);
      const { page } = person;
      await page.goto(request.approval_url);
      await details(page).getByText("Give an operator control of all your Test Pets (PET)").waitFor();
      await page
        .getByRole("alert")
        .filter({ hasText: `Full access: ${operator} could move every token you hold in Test Pets (PET)` })
        .waitFor();
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").filter({ hasText: "Rejected" }).waitFor();
    });

    it("calldata the page cannot decode is shown as an unknown contract call, with its selector and raw bytes", async () => {
      const data = "0xdeadbeef0000000000000000000000000000000000000000000000000000000000000001";
      const request = await sendTransaction(newAddress(), data);
      const { page } = person;
      await page.goto(request.approval_url);
      await details(page).getByText("Unknown contract call.").waitFor();
      assert.equal(await page.locator("dt", { hasText: "Function selector" }).locator("+ dd").innerText(), "0xdeadbeef");
      await details(page).getByText(data).waitFor();
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").filter({ hasText: "Rejected" }).waitFor();
    });

    it("an EIP-2612 Permit is shown as the allowance it grants, with the token read from the chain and the unlimited warning", async () => {
      const spender = newAddress();
      const permit = (chainId: number) => eip2612Permit({ token, chainId, owner: wallet.address, spender, value: maxUint256.toString() });
      const { page } = person;
      const request = await ask("sign_typed_data", { typed_data: permit(31337) });
      await page.goto(request.approval_url);
      await details(page).getByText("Allow spending of unlimited TST").waitFor();
      await page
        .getByRole("alert")
        .filter({ hasText: `Unlimited approval: ${spender} could take all your TST` })
        .waitFor();
      // The permit's deadline as a date, in the summary and beside its raw value in the fields.
      await details(page)
        .getByText(/^2030-03-17 17:46:40 UTC \(in [\d,]+ days\)$/)
        .waitFor();
      await details(page)
        .getByText(/2030-03-17 17:46:40 UTC \(in [\d,]+ days\) \(raw integer 1900000000\)$/)
        .waitFor();
      // Only the declared fields are listed, each once, under the primary type.
      const fields = page.locator("dt", { hasText: "Permit fields" }).locator("+ dd > dl > dt");
      assert.deepEqual(await fields.allInnerTexts(), [
        "owner address",
        "spender address",
        "value uint256",
        "nonce uint256",
        "deadline uint256",
      ]);
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").filter({ hasText: "Rejected" }).waitFor();

      // The same permit for a chain that is not configured: the token cannot be asked, so it is not named.
      const elsewhere = await ask("sign_typed_data", { typed_data: permit(1) });
      await page.goto(elsewhere.approval_url);
      await details(page).getByText("Allow spending of an unlimited amount of an unknown token").waitFor();
      await details(page).getByText(`unknown token ${token}`).waitFor();
    });
  },
);
