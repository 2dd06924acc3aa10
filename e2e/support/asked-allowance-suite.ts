// Issue 57's first point, end to end on one database: an MCP SDK client asks, with request_allowance, for an allowance
// of 5 of a test token a day to one payee, 3 payments, for an address whose key the test holds as the agent; the person
// (Chromium, virtual passkey with PRF) opens the approval page, reads the allowance card decoded from what is signed,
// and approves with one tap; get_request then answers ERC-7715's granted permission. On the local chain the agent's own
// key redeems it (paying its own gas) within the cap, the chain refuses it above the cap, and Agent Wallet's delegate
// key, everything the server holds, redeems nothing. A request the person rejects gives nothing. The CLI asks with a key
// it keeps; the agent passes a narrower slice on to a sub-agent (the SDK's sliceAllowance), which the chain holds to it
// and which stops when the person revokes the agent. With `blockMs` all of it on a chain that mines a block that often,
// with a mempool, as real chains do (e2e/allowances/asked-allowance-blocks.test.ts): a redemption above the cap is then
// mined reverted rather than refused when sent, and the agent's own payment is recorded once CONFIRMATIONS blocks stand
// on it (lib/allowances/own-payments.ts).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { Browser } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { encodeFunctionData, erc20Abi, getAddress, parseEther, parseUnits, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type LocalAccount } from "viem/accounts";
import { AgentWalletClient, ownRedemption, sliceAllowance, SliceError } from "agent-wallet/sdk";
import type { RunningApp } from "./app";
import type { LocalChain } from "./chain";
import { startAllowanceApp, type AllowanceApp } from "./allowances";
import { deployErc20 } from "./contracts";
import { connectAgent, newPerson, type Person } from "./consent";
import type { MemoryOAuthProvider } from "./mcp-client";
import { reviewedWords } from "./allowance-picker";
import { apiKeyForCredential, cliEnv, runCli } from "./cli";
import { db } from "@/lib/db";
import { CONFIRMATIONS } from "@/lib/allowances/own-payments";
import type { GrantedPermission, RequestView } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

/** `blockMs`: the chain mines a block that often, with a mempool, as a real chain (else each transaction at once). */
export function askedAllowanceSuite(database: "sqlite" | "postgres", options: { blockMs?: number } = {}) {
  const blocks = options.blockMs ? `, ${options.blockMs / 1000}-second blocks` : "";
  describe(`an allowance the agent asks for its own key (${database}${blocks})`, { timeout: 600_000 }, () => {
    let world: AllowanceApp;
    let chain: LocalChain;
    let app: RunningApp;
    let browser: Browser;
    let person: Person;
    let client: Client;
    let provider: MemoryOAuthProvider;
    /** the allowance the person gave the agent's key (the approval's test), which the slice's test passes on */
    let given: GrantedPermission;
    let credentialId: string;
    let wallet: Address;
    let token: Address;
    const agentKey = privateKeyToAccount(generatePrivateKey());
    const payee = getAddress(privateKeyToAccount(generatePrivateKey()).address);

    before(async () => {
      ({ chain, app, browser } = world = await startAllowanceApp({ browser: true, database }));
      person = await newPerson(browser, app, `asks-${database}@example.com`, ["Main"]);
      const main = await db().credential.findFirstOrThrow({ where: { name: "Main", user: { email: person.email } } });
      credentialId = main.id;
      wallet = getAddress(main.address);
      await chain.fund(wallet, "1");
      // the agent pays its own gas: the server relays nothing for an allowance whose key it does not hold
      await chain.fund(agentKey.address, "1");
      token = await deployErc20(chain, { name: "Test Token", symbol: "TT", supply: parseEther("100"), holder: wallet });
      ({ client, provider } = await connectAgent(app, person.page, "Own Key Agent", [{ name: "Main", mode: "approve" }]));
      if (options.blockMs) await chain.mineEvery(options.blockMs);
    });
    after(async () => {
      await client?.close();
      await world?.stop();
    });

    const balanceOf = (holder: Address) =>
      chain.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });

    async function ask(overrides: Record<string, unknown> = {}): Promise<ToolResult> {
      const now = Number((await chain.client.getBlock()).timestamp);
      return (await client.callTool({
        name: "request_allowance",
        arguments: {
          credential_id: credentialId,
          chain_id: chain.chainId,
          to: agentKey.address,
          permissions: [
            {
              type: "erc20-token-periodic",
              data: { tokenAddress: token, periodAmount: toHex(parseUnits("5", 18)), periodDuration: 86_400 },
            },
          ],
          payees: [payee],
          payments: 3,
          expiry: now + 7 * 86_400,
          justification: "Pay the data feed I use for your reports",
          ...overrides,
        },
      })) as ToolResult;
    }
    function viewOf(result: ToolResult): RequestView {
      assert.notEqual(result.isError, true, result.content[0]?.text);
      return result.structuredContent as RequestView;
    }
    const getRequest = async (requestId: string) =>
      viewOf((await client.callTool({ name: "get_request", arguments: { request_id: requestId } })) as ToolResult);

    /** The agent's own transaction (the SDK's ownRedemption): `context` redeemed for a transfer of `amount` to `to`. */
    async function redeemAs(account: LocalAccount, context: Hex, manager: Address, to: Address, amount: bigint) {
      const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] });
      const { data } = ownRedemption({ delegation_manager: manager }, { context }, { target: token, data: transfer });
      const nonce = await chain.client.getTransactionCount({ address: account.address });
      const fees = await chain.client.estimateFeesPerGas();
      const signed = await account.signTransaction({
        chainId: chain.chainId,
        type: "eip1559",
        to: manager,
        data,
        nonce,
        // a slice's chain runs the hooks of two delegations
        gas: 1_500_000n,
        maxFeePerGas: fees.maxFeePerGas,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      const hash = await chain.client.sendRawTransaction({ serializedTransaction: signed });
      return chain.client.waitForTransactionReceipt({ hash });
    }

    /** How the chain answered a redemption expected to fail: hardhat refuses a reverting transaction, or mines it reverted. */
    const refusal = (outcome: unknown) => (outcome instanceof Error ? outcome.message : (outcome as { status: string }).status);

    it("is refused before anyone is asked when it is not an allowance the chain could enforce", async () => {
      const before = await db().agentRequest.count({ where: { credentialId } });
      const twoPeriods = await ask({
        permissions: [
          { type: "erc20-token-periodic", data: { tokenAddress: token, periodAmount: "5", periodDuration: 86_400 } },
          { type: "native-token-periodic", data: { periodAmount: "5", periodDuration: 3600 } },
        ],
      });
      assert.equal(twoPeriods.isError, true);
      assert.match(twoPeriods.content[0].text, /same periodDuration/);
      const noToken = await ask({
        permissions: [{ type: "erc20-token-periodic", data: { tokenAddress: payee, periodAmount: "5", periodDuration: 86_400 } }],
      });
      assert.equal(noToken.isError, true);
      assert.match(noToken.content[0].text, /not an ERC-20 token/);
      const tooLong = await ask({ expiry: Math.floor(Date.now() / 1000) + 90 * 86_400 });
      assert.equal(tooLong.isError, true);
      assert.match(tooLong.content[0].text, /30 days/);
      const itself = await ask({ to: wallet });
      assert.equal(itself.isError, true);
      assert.match(itself.content[0].text, /the wallet itself/);
      assert.equal(await db().agentRequest.count({ where: { credentialId } }), before, "no request was created");
    });

    it("a rejected request gives nothing", async () => {
      const asked = viewOf(await ask({ justification: "Something the person declines" }));
      assert.equal(asked.kind, "request_allowance");
      await person.page.goto(asked.approval_url);
      await person.page.getByRole("button", { name: "Reject" }).click();
      await person.page.getByText("Rejected. Nothing was signed.").waitFor();
      const view = await getRequest(asked.request_id);
      assert.equal(view.status, "rejected");
      assert.equal(view.permission ?? null, null);
      assert.equal(await db().allowance.count({ where: { credentialId } }), 0);
    });

    it("the person approves it with one tap; only the agent's own key can spend it, within its caps", async () => {
      const asked = viewOf(await ask());
      assert.equal(asked.status, "pending");
      const page = person.page;
      await page.goto(asked.approval_url);
      await page.getByRole("heading", { name: "Give an allowance to the agent's own key" }).waitFor();
      await page.getByText("“Pay the data feed I use for your reports”").waitFor();
      // the card, decoded in the page from the delegations its tap signs
      const words = (await reviewedWords(page)).join("\n");
      assert.match(words, /5 TT/);
      assert.match(words, new RegExp(`Only the agent's own key, address ${agentKey.address}, can spend it`));
      assert.match(words, /Agent Wallet holds no key that can/);
      await page.getByRole("button", { name: "Approve with passkey" }).click();
      await page.getByText(/Approved: the agent's key can now spend within this allowance/).waitFor();

      const done = await getRequest(asked.request_id);
      assert.equal(done.status, "completed");
      const permission = (given = done.permission!);
      assert.ok(permission, "get_request answers the granted permission");
      assert.equal(getAddress(permission.to), agentKey.address);
      assert.equal(getAddress(permission.from), wallet);
      assert.equal(permission.granted.length, 1);
      const [granted] = permission.granted;
      assert.equal(granted.permission.type, "erc20-token-periodic");
      assert.equal(BigInt(granted.permission.data.periodAmount as string), parseUnits("5", 18));
      assert.deepEqual(
        granted.payees.map((address) => getAddress(address)),
        [payee],
      );
      const stored = await db().allowance.findUniqueOrThrow({ where: { id: permission.allowance_id } });
      assert.equal(stored.delegateKind, "agent");
      assert.equal(getAddress(stored.delegate), agentKey.address);
      const grantCredential = await db().grantCredential.findFirstOrThrow({ where: { credentialId } });
      assert.equal(grantCredential.mode, "allowance");

      // Clients lists it under the agent, naming the key that alone spends it
      await page.goto(`${app.baseUrl}/clients`);
      await page.getByText(`Spent only by the agent's own key, address ${agentKey.address}`).waitFor();

      const manager = getAddress(permission.delegation_manager);
      const context = granted.context as Hex;
      // everything the server holds (its database and ALLOWANCE_KEY_SECRET, shared with this process): its delegate key,
      // which signs every server-held allowance's payments, redeems nothing of this one
      const { delegateAccount } = await import("@/lib/allowances/delegate-key");
      const serverKey = await delegateAccount();
      await chain.fund(serverKey.address, "1");
      const stolen = await redeemAs(serverKey, context, manager, payee, 1n).catch((error: unknown) => error);
      assert.match(refusal(stolen), /revert/i, "the chain refuses the server's key");
      assert.equal(await balanceOf(payee), 0n);

      const paid = await redeemAs(agentKey, context, manager, payee, parseUnits("2", 18));
      assert.equal(paid.status, "success");
      assert.equal(await balanceOf(payee), parseUnits("2", 18));
      const above = await redeemAs(agentKey, context, manager, payee, parseUnits("4", 18)).catch((error: unknown) => error);
      assert.match(refusal(above), /revert/i, "above what is left the chain refuses");
      assert.equal(await balanceOf(payee), parseUnits("2", 18));

      // the payment the agent sent itself, read from the chain once confirmed: on Clients with what is left, and in the
      // audit log
      await chain.untilBlock(paid.blockNumber + CONFIRMATIONS);
      const read = (await client.callTool({ name: "get_allowance", arguments: { credential_id: credentialId } })) as ToolResult;
      type Listed = { allowances: { id: string; limits: { left: string | null; transfers_left: number | null }[] }[] };
      const [limit] = (read.structuredContent as Listed).allowances.find((entry) => entry.id === permission.allowance_id)!.limits;
      assert.deepEqual([limit.left, limit.transfers_left], ["3", 2]);
      const spends = await db().allowanceSpend.findMany({ where: { allowanceId: permission.allowance_id } });
      assert.deepEqual(
        spends.map(({ amount, txHash, status }) => ({ amount, txHash, status })),
        [{ amount: String(parseUnits("2", 18)), txHash: paid.transactionHash, status: "landed" }],
        "recorded once, however often it is read",
      );
      await page.goto(`${app.baseUrl}/clients`);
      await page.getByRole("table", { name: "Payments from this allowance" }).getByText(payee).waitFor();
      await page.goto(`${app.baseUrl}/audit`);
      await page
        .getByText(new RegExp(`Paid 2 TT to ${payee} from the allowance, sent by the agent's own key ${agentKey.address}`))
        .waitFor();
    });

    it("the CLI asks with a key it makes and keeps (mode 0600); the approved permission names that key", async () => {
      const key = await apiKeyForCredential(credentialId, "CLI Agent");
      const { env, configDir } = cliEnv({ AGENT_WALLET_API_KEY: key, AGENT_WALLET_URL: app.baseUrl });
      const args = ["request-allowance", "Main", "--chain", String(chain.chainId), "--amount", `1.5 ${token}`, "--to", payee];
      const asked = await runCli(
        [...args, "--payments", "2", "--days", "3", "--why", "Pay the feed from the CLI", "--no-wait", "--json"],
        env,
      );
      assert.equal(asked.code, 0, asked.stderr);
      const pending = JSON.parse(asked.stdout) as RequestView;
      assert.equal(pending.status, "pending");
      const file = path.join(configDir, "agent-key.json");
      assert.equal(fs.statSync(file).mode & 0o777, 0o600, "the key is readable only by its owner");
      const kept = JSON.parse(fs.readFileSync(file, "utf8")) as { address: Address; privateKey: Hex };
      assert.equal(privateKeyToAccount(kept.privateKey).address, kept.address);

      await person.page.goto(pending.approval_url);
      assert.match((await reviewedWords(person.page)).join("\n"), new RegExp(`Only the agent's own key, address ${kept.address}`));
      await person.page.getByRole("button", { name: "Approve with passkey" }).click();
      const waited = await runCli(["request", "wait", pending.request_id, "--json"], env);
      assert.equal(waited.code, 0, waited.stderr);
      const done = JSON.parse(waited.stdout) as RequestView;
      assert.equal(done.status, "completed");
      assert.equal(getAddress(done.permission!.to), kept.address);
      assert.equal(BigInt(done.permission!.granted[0].permission.data.periodAmount as string), parseUnits("1.5", 18));
      // `send` pays from it with the CLI's key, which holds no gas: the relayer sends what the key signed
      const paidBefore = await balanceOf(payee);
      const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [payee, parseUnits("1", 18)] });
      const enforcer = world.environment.caveatEnforcers.ExactExecutionEnforcer;
      const sendArgs = ["send", "Main", "--chain", String(chain.chainId), "--to", token, "--value", "0", "--data", transfer];
      const unvouched = await runCli([...sendArgs, "--json"], env);
      assert.notEqual(unvouched.code, 0, "on a chain with no published framework, the key signs only with an enforcer it trusts");
      assert.match(unvouched.stderr, /exactExecutionEnforcer/);
      const sent = await runCli([...sendArgs, "--exact-execution-enforcer", enforcer, "--json"], env);
      assert.equal(sent.code, 0, sent.stderr);
      const paid = JSON.parse(sent.stdout) as RequestView;
      assert.equal(paid.status, "completed");
      assert.equal(await balanceOf(payee), paidBefore + parseUnits("1", 18));
      assert.equal(await chain.client.getBalance({ address: kept.address }), 0n, "the CLI's key paid no gas");
      // asked again, the CLI uses the same key
      const again = await runCli([...args, "--payments", "1", "--why", "Once more", "--no-wait", "--json"], env);
      assert.equal(again.code, 0, again.stderr);
      assert.equal((JSON.parse(fs.readFileSync(file, "utf8")) as { address: string }).address, kept.address);
    });

    it("the agent passes a narrower slice on to a sub-agent: the chain holds the sub-agent to it, and revoking stops both", async () => {
      const subKey = privateKeyToAccount(generatePrivateKey());
      await chain.fund(subKey.address, "1");
      const wallet = new AgentWalletClient({ baseUrl: app.baseUrl, accessToken: provider.tokens()!.access_token });
      const narrower = { to: subKey.address, limits: [{ token, periodAmount: parseUnits("1", 18) }], payments: 2 };
      // the SDK refuses more than the allowance gives before anything is signed
      await assert.rejects(
        sliceAllowance(wallet, agentKey, given, { ...narrower, limits: [{ token, periodAmount: parseUnits("50", 18) }] }),
        SliceError,
      );
      // the service refuses a slice that is not the agent key's
      const impostor = privateKeyToAccount(generatePrivateKey());
      await assert.rejects(
        sliceAllowance(wallet, { address: agentKey.address, signTypedData: (data) => impostor.signTypedData(data) }, given, narrower),
        /signature is not the agent key's/,
      );
      const sub = await sliceAllowance(wallet, agentKey, given, narrower);
      assert.equal(getAddress(sub.to), subKey.address);
      const [slice] = sub.granted;
      const manager = getAddress(sub.delegation_manager);
      const paidBefore = await balanceOf(payee);

      const above = await redeemAs(subKey, slice.context as Hex, manager, payee, parseUnits("1.5", 18)).catch((error: unknown) => error);
      assert.match(refusal(above), /revert/i, "above its slice the chain refuses the sub-agent");
      const paid = await redeemAs(subKey, slice.context as Hex, manager, payee, parseUnits("1", 18));
      assert.equal(paid.status, "success");
      assert.equal(await balanceOf(payee), paidBefore + parseUnits("1", 18));

      // the person sees it under its parent, and the agent in get_allowance; its payment, once confirmed, as the parent's
      await chain.untilBlock(paid.blockNumber + CONFIRMATIONS);
      await person.page.goto(`${app.baseUrl}/clients`);
      await person.page.getByText(`Passed on by the agent to the key ${subKey.address}`).waitFor();
      const allowance = (await client.callTool({ name: "get_allowance", arguments: { credential_id: credentialId } })) as ToolResult;
      const listed = (allowance.structuredContent as { allowances: { id: string; slices?: { to: string }[] }[] }).allowances;
      const parent = listed.find((entry) => entry.id === given.allowance_id)!;
      assert.deepEqual(
        parent.slices?.map((entry) => getAddress(entry.to)),
        [subKey.address],
      );
      const recorded = await db().allowanceSpend.findMany({ where: { allowanceId: given.allowance_id, txHash: paid.transactionHash } });
      assert.deepEqual(
        recorded.map(({ amount, status }) => [amount, status]),
        [[String(parseUnits("1", 18)), "landed"]],
      );

      // revoking the client sends the allowance's revocation, signed with it: the slice stops with it, on chain
      person.page.once("dialog", (dialog) => void dialog.accept());
      await person.page.getByRole("button", { name: "Revoke Own Key Agent" }).click();
      const hashes = (await db().allowanceDelegation.findMany({ where: { allowanceId: given.allowance_id } })).map(
        (row) => row.hash as Hex,
      );
      for (let tries = 0; !(await world.disabledOnChain(hashes)).every(Boolean); tries++) {
        assert.ok(tries < 100, "the allowance is disabled on chain");
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const afterRevoke = await redeemAs(subKey, slice.context as Hex, manager, payee, 1n).catch((error: unknown) => error);
      assert.match(refusal(afterRevoke), /revert/i, "a slice of a revoked allowance redeems nothing");
      assert.equal(await balanceOf(payee), paidBefore + parseUnits("1", 18));
    });
  });
}
