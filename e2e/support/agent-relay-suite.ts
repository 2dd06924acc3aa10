// Issue 57's second point for a relayed payment, end to end on one database, on 2-second blocks: an agent whose own key
// (holding no coin for gas) spends an allowance the person gave it (request_allowance, approved with a passkey in
// Chromium) pays through Agent Wallet's relayer with the SDK's payFromAllowance. The relayer sends exactly what the
// agent's key signed and pays its gas; the same signed delegation sent again answers the first payment; a delegation
// the agent's key did not sign, or that lets the relayer do anything more, is refused with nothing sent; and a server
// that prepares anything but the payment asked for gets no signature from the SDK. A stock x402 merchant (@x402/express
// with @x402/evm's own eip3009 facilitator) is paid with the agent's key: funded from the allowance to that key through
// the relayer, then authorized by the key alone; a merchant that takes erc7710 is paid by a delegation the key signs to
// its facilitator, with nothing sent by the relayer, and counted from the chain's events.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createExactExecutionTerms, createLimitedCallsTerms, createTimestampTerms, hashDelegation } from "@metamask/delegation-core";
import { encodeFunctionData, erc20Abi, getAddress, parseEther, parseUnits, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  AgentWalletClient,
  AllowancePaymentError,
  payFromAllowance,
  payingFetch,
  PaymentRefusedError,
  type SliceSigner,
} from "agent-wallet/sdk";
import type { RunningApp } from "./app";
import type { LocalChain } from "./chain";
import { startAllowanceApp, type AllowanceApp } from "./allowances";
import { deployErc20, mintFiatToken } from "./contracts";
import { eip3009Sale } from "./agent-account-cases";
import { signedLeaf, type Leaf } from "./agent-leaf";
import { startEip3009Facilitator } from "./x402-eip3009";
import { startPaidResource, type PaidResource } from "./x402-resource";
import { startErc7710Facilitator } from "./x402-facilitator";
import { deployFiatToken } from "@/test-chain/fiat-token";
import { connectAgent, newPerson, type Person } from "./consent";
import { apiKeyForCredential, cliEnv, runCli } from "./cli";
import { db } from "@/lib/db";
import { CONFIRMATIONS } from "@/lib/allowances/own-payments";
import type { GrantedPermission, RequestView, ToolInput, ToolOutput } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };
type Prepared = ToolOutput<"prepare_allowance_payment">;

const PRICE = 10_000n; // 0.01 USDC

export function agentRelaySuite(database: "sqlite" | "postgres") {
  describe(`payments an agent's own key signs, sent by the relayer (${database})`, { timeout: 600_000 }, () => {
    let world: AllowanceApp;
    let chain: LocalChain;
    let app: RunningApp;
    let browser: Browser;
    let person: Person;
    let client: Client;
    let wallet: AgentWalletClient;
    let permission: GrantedPermission;
    let credentialId: string;
    let token: Address;
    let exactExecutionEnforcer: Address;
    const resources: PaidResource[] = [];
    const agentKey = privateKeyToAccount(generatePrivateKey());
    const payee = getAddress(privateKeyToAccount(generatePrivateKey()).address);

    before(async () => {
      ({ chain, app, browser } = world = await startAllowanceApp({ browser: true, database }));
      exactExecutionEnforcer = getAddress(world.environment.caveatEnforcers.ExactExecutionEnforcer);
      person = await newPerson(browser, app, `relayed-${database}@example.com`, ["Main"]);
      const main = await db().credential.findFirstOrThrow({ where: { name: "Main", user: { email: person.email } } });
      credentialId = main.id;
      await chain.fund(getAddress(main.address), "1");
      token = await deployErc20(chain, { name: "Test Token", symbol: "TT", supply: parseEther("100"), holder: getAddress(main.address) });
      let provider;
      ({ client, provider } = await connectAgent(app, person.page, "Relayed Agent", [{ name: "Main", mode: "approve" }]));
      wallet = new AgentWalletClient({ baseUrl: app.baseUrl, accessToken: provider.tokens()!.access_token });
      permission = await approvedAllowance({
        permissions: [
          { type: "erc20-token-periodic", data: { tokenAddress: token, periodAmount: toHex(parseUnits("5", 18)), periodDuration: 86_400 } },
        ],
        payees: [payee],
        payments: 3,
      });
    });
    after(async () => {
      for (const resource of resources) await resource.close();
      await client?.close();
      await world?.stop();
    });

    /** An allowance for the agent's key, asked with request_allowance and approved by the person's passkey. */
    async function approvedAllowance(terms: Partial<ToolInput<"request_allowance">>): Promise<GrantedPermission> {
      const now = Number((await chain.client.getBlock()).timestamp);
      const asked = await wallet.requestAllowance({
        credential_id: credentialId,
        chain_id: chain.chainId,
        to: agentKey.address,
        permissions: [],
        payments: 3,
        expiry: now + 7 * 86_400,
        justification: "Pay for data; Agent Wallet's relayer pays the gas",
        ...terms,
      });
      await person.page.goto(asked.approval_url);
      await person.page.getByRole("button", { name: "Approve with passkey" }).click();
      await person.page.getByText(/Approved: the agent's key can now spend within this allowance/).waitFor();
      const given = (await wallet.getRequest({ request_id: asked.request_id })).permission;
      assert.ok(given, "the person's approval answers the granted permission");
      return given;
    }
    const balanceOf = (holder: Address) =>
      chain.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [holder] });
    const transfer = (to: Address, amount: bigint) => ({
      to: token,
      data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] }),
    });
    const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
    const prepare = async (payment: { to: Address; data: Hex }) => {
      const result = await call("prepare_allowance_payment", {
        credential_id: credentialId,
        chain_id: chain.chainId,
        value: "0",
        ...payment,
      });
      assert.notEqual(result.isError, true, result.content[0]?.text);
      return result.structuredContent as Prepared;
    };
    const signed = (leaf: Leaf, signer = agentKey) => signedLeaf(leaf, signer, permission.delegation_manager as Address, chain.chainId);
    const send = (delegation: Leaf, extra: Record<string, unknown> = {}) =>
      call("send_allowance_payment", { credential_id: credentialId, chain_id: chain.chainId, delegation, ...extra });
    const payments = () => db().agentRequest.count({ where: { credentialId, kind: "send_transaction" } });

    it("the relayer sends exactly what the agent's key signed and pays its gas; sent again, it answers the first payment", async () => {
      assert.equal(await chain.client.getBalance({ address: agentKey.address }), 0n, "the agent's key holds nothing for gas");
      const nonce = await world.relayerNonce();
      const paid = await chain.miningEvery(2000, () =>
        payFromAllowance(wallet, agentKey, permission, transfer(payee, parseUnits("2", 18)), { credentialId, exactExecutionEnforcer }),
      );
      assert.equal(paid.status, "completed", paid.reason ?? "");
      assert.match(paid.reason ?? "", /without a tap/);
      assert.equal(await balanceOf(payee), parseUnits("2", 18));
      assert.equal(await world.relayerNonce(), nonce + 1, "one transaction, the relayer's");
      const receipt = await chain.client.getTransactionReceipt({ hash: paid.tx_hash as Hex });
      assert.equal(getAddress(receipt.from), world.relayer);

      // Sent again (its answer lost, say): the same signed delegation answers the first payment and sends nothing.
      const prepared = await prepare(transfer(payee, parseUnits("1", 18)));
      const leaf = await signed(prepared.delegation);
      const [first, again] = await chain.miningEvery(2000, async () => {
        const one = await send(leaf);
        return [one, await send(leaf)];
      });
      const firstView = first.structuredContent as RequestView;
      assert.equal(firstView.status, "completed", first.content[0]?.text);
      assert.deepEqual(
        [(again.structuredContent as RequestView).request_id, (again.structuredContent as RequestView).tx_hash],
        [firstView.request_id, firstView.tx_hash],
      );
      assert.equal(await balanceOf(payee), parseUnits("3", 18));
      assert.equal(await world.relayerNonce(), nonce + 2);

      // Counted once each, though the chain's events show them too once they stand under enough blocks to be read;
      // what is left is the chain's
      const last = await chain.client.getTransactionReceipt({ hash: firstView.tx_hash as Hex });
      await chain.untilBlock(last.blockNumber + CONFIRMATIONS);
      const read = await call("get_allowance", { credential_id: credentialId });
      type Listed = {
        allowances: { id: string; limits: { left: string | null; transfers_left: number | null }[]; permission?: GrantedPermission }[];
      };
      const listed = (read.structuredContent as Listed).allowances.find((entry) => entry.id === permission.allowance_id)!;
      const [limit] = listed.limits;
      // and what the key needs to spend it, as the approval answered it (the CLI's send finds it there)
      assert.deepEqual(
        listed.permission?.granted.map((granted) => granted.context),
        permission.granted.map((granted) => granted.context),
      );
      assert.deepEqual([limit.left, limit.transfers_left], ["2", 1]);
      const { ownPaymentsFrom } = await db().allowance.findUniqueOrThrow({ where: { id: permission.allowance_id } });
      assert.ok(BigInt(ownPaymentsFrom!) > last.blockNumber, "the chain's events of both payments were read");
      const spends = await db().allowanceSpend.findMany({ where: { allowanceId: permission.allowance_id }, orderBy: { createdAt: "asc" } });
      assert.deepEqual(
        spends.map(({ txHash, status }) => ({ txHash, status })),
        [paid.tx_hash, firstView.tx_hash].map((txHash) => ({ txHash, status: "landed" })),
      );
    });

    it("a delegation the agent's key did not sign, or that lets the relayer do more, is refused and nothing is sent", async () => {
      const nonce = await world.relayerNonce();
      const before = await payments();
      const prepared = await prepare(transfer(payee, parseUnits("1", 18)));
      const [exact, , until] = prepared.delegation.caveats;
      const impostor = privateKeyToAccount(generatePrivateKey());
      const cases: [string, Leaf, RegExp][] = [
        ["signed by another key", await signed(prepared.delegation, impostor), /not signed by the allowance's key/],
        [
          "a call of the agent's choosing to someone else",
          await signed({
            ...prepared.delegation,
            caveats: [
              {
                ...exact,
                terms: createExactExecutionTerms({
                  execution: { target: token, value: 0n, callData: transfer(impostor.address, 1n).data },
                }),
              },
              ...prepared.delegation.caveats.slice(1),
            ],
          }),
          /not among this allowance's recipients/,
        ],
        [
          "no limit on its uses",
          await signed({ ...prepared.delegation, caveats: [exact, until] }),
          /ExactExecution, LimitedCalls and Timestamp/,
        ],
        [
          "to a delegate that is no relayer",
          await signed({ ...prepared.delegation, delegate: impostor.address }),
          /not a relayer of payments on this chain/,
        ],
      ];
      // input no delegation could be: refused by the schema, in the tool's words
      const hostile: [string, unknown, RegExp][] = [
        ["a salt past uint256", { ...prepared.delegation, salt: "9".repeat(78) }, /below 2\^256/],
        ["no caveats", { ...prepared.delegation, caveats: [] }, /caveats/],
        ["an authority that is no hash", { ...prepared.delegation, authority: "0x1234" }, /32-byte hash/],
      ];
      for (const [what, delegation, expected] of hostile) {
        const result = await send(delegation as Leaf);
        assert.equal(result.isError, true, what);
        assert.match(result.content[0].text, expected, what);
      }
      for (const [what, leaf, expected] of cases) {
        const result = await send(leaf);
        assert.equal(result.isError, true, what);
        assert.match(result.content[0].text, expected, what);
      }
      // prepare refuses what the allowance does not cover, in the person's units
      const above = await call("prepare_allowance_payment", {
        credential_id: credentialId,
        chain_id: chain.chainId,
        value: "0",
        ...transfer(payee, parseUnits("4", 18)),
      });
      assert.equal(above.isError, true);
      assert.match(above.content[0].text, /4 TT is over your allowance of 5 TT a day/);
      assert.equal(await world.relayerNonce(), nonce, "nothing was sent");
      assert.equal(await payments(), before, "nothing was recorded");
    });

    it("the SDK signs nothing a server prepared beyond the payment asked for", async () => {
      const nonce = await world.relayerNonce();
      const asked = transfer(payee, parseUnits("1", 18));
      const thief = getAddress(privateKeyToAccount(generatePrivateKey()).address);
      let signatures = 0;
      const counting: SliceSigner = {
        address: agentKey.address,
        signTypedData: (data) => {
          signatures++;
          return agentKey.signTypedData(data);
        },
      };
      const hostile = (tamper: (prepared: Prepared) => Prepared) =>
        Object.assign(Object.create(wallet) as AgentWalletClient, {
          prepareAllowancePayment: async (...args: Parameters<AgentWalletClient["prepareAllowancePayment"]>) =>
            tamper(await wallet.prepareAllowancePayment(...args)),
        });
      const withCaveat = (prepared: Prepared, index: number, caveat: Partial<Leaf["caveats"][number]>) => ({
        ...prepared,
        delegation: {
          ...prepared.delegation,
          caveats: prepared.delegation.caveats.map((each, at) => (at === index ? { ...each, ...caveat } : each)),
        },
      });
      const other = transfer(thief, parseUnits("1", 18)).data;
      const tampered: [string, (prepared: Prepared) => Prepared][] = [
        [
          "another call",
          (p) => withCaveat(p, 0, { terms: createExactExecutionTerms({ execution: { target: token, value: 0n, callData: other } }) }),
        ],
        ["an enforcer it cannot vouch for", (p) => withCaveat(p, 0, { enforcer: thief })],
        ["more than one use", (p) => withCaveat(p, 1, { terms: createLimitedCallsTerms({ limit: 2 }) })],
        [
          "a delegation that lives for a day",
          (p) =>
            withCaveat(p, 2, {
              terms: createTimestampTerms({ afterThreshold: 0, beforeThreshold: Math.floor(Date.now() / 1000) + 86_400 }),
            }),
        ],
        [
          "under a delegation not the person's",
          (p) => ({ ...p, delegation: { ...p.delegation, authority: hashDelegation({ ...p.delegation, salt: 1n } as never) } }),
        ],
      ];
      for (const [what, tamper] of tampered)
        await assert.rejects(
          payFromAllowance(hostile(tamper), counting, permission, asked, { credentialId, exactExecutionEnforcer }),
          AllowancePaymentError,
          what,
        );
      // on a chain without a published framework the SDK vouches for no enforcer unless told which
      await assert.rejects(payFromAllowance(wallet, counting, permission, asked, { credentialId }), /pass exactExecutionEnforcer/);
      assert.equal(signatures, 0, "nothing was signed");
      assert.equal(await world.relayerNonce(), nonce, "nothing was sent");
    });

    /** Waits until the relayer disabled a replaced allowance on chain. */
    async function untilRevoked(allowanceId: string) {
      for (let tries = 0; (await db().allowance.findUniqueOrThrow({ where: { id: allowanceId } })).status !== "revoked"; tries++) {
        assert.ok(tries < 150, "the replaced allowance is revoked on chain");
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }

    it("pays an erc7710 merchant with the agent's own key: one delegation to its facilitator, nothing through the relayer", async () => {
      const replaced = permission.allowance_id;
      permission = await approvedAllowance({
        permissions: [
          { type: "erc20-token-periodic", data: { tokenAddress: token, periodAmount: toHex(parseUnits("5", 18)), periodDuration: 86_400 } },
        ],
        payees: [payee],
        payments: 3,
      });
      await untilRevoked(replaced);
      const facilitator = await startErc7710Facilitator(chain, getAddress(permission.delegation_manager));
      const price = parseUnits("0.5", 18);
      const saleOf = (by: typeof facilitator) => ({
        facilitator: by,
        chainId: chain.chainId,
        token,
        payTo: payee,
        amount: price,
        description: "A report paid by delegation",
      });
      const sale = await startPaidResource(saleOf(facilitator));
      resources.push(sale);
      const nonce = await world.relayerNonce();
      const before = await balanceOf(payee);
      const paidWith: ToolOutput<"pay_x402">[] = [];
      const paying = payingFetch(wallet, {
        credentialId,
        maxPerPayment: { TT: "1" },
        ownKey: { account: agentKey, permission, exactExecutionEnforcer },
        onPayment: (paid) => paidWith.push(paid),
      });
      const response = await chain.miningEvery(2000, () => paying(sale.url));
      assert.equal(response.status, 200, facilitator.lastRefusal() ?? "");
      assert.deepEqual(await response.json(), { report: "paid content" });
      assert.equal(await balanceOf(payee), before + price, "the merchant was paid from the person's wallet");
      assert.equal(await world.relayerNonce(), nonce, "the relayer sent nothing");
      assert.equal(await chain.client.getBalance({ address: agentKey.address }), 0n, "nor did the agent's key, which holds no gas");
      const [paid] = paidWith;
      assert.equal(paid.allowance_id, permission.allowance_id);
      assert.deepEqual([paid.payee, paid.paid.amount, paid.paid.symbol], [payee, String(price), "TT"]);

      // The same payment header again: the delegation is used up on chain, and nothing more is paid
      const again = await chain.miningEvery(2000, () => fetch(sale.url, { headers: { [paid.header!]: paid.value! } }));
      assert.equal(again.status, 402);
      assert.equal(await balanceOf(payee), before + price);

      // A merchant whose requirement names several facilitators, its own last: the delegation lets any of them redeem
      const stranger = getAddress(privateKeyToAccount(generatePrivateKey()).address);
      const among = await startErc7710Facilitator(chain, getAddress(permission.delegation_manager), { alsoNamed: [stranger] });
      const second = await startPaidResource({ ...saleOf(among), amount: price / 2n });
      resources.push(second);
      const redeemerEnforcer = getAddress(world.environment.caveatEnforcers.RedeemerEnforcer);
      const payingAmong = payingFetch(wallet, {
        credentialId,
        maxPerPayment: { TT: "1" },
        ownKey: { account: agentKey, permission, exactExecutionEnforcer, redeemerEnforcer },
      });
      const paidAmong = await chain.miningEvery(2000, () => payingAmong(second.url));
      assert.equal(paidAmong.status, 200, among.lastRefusal() ?? "");
      assert.equal(await balanceOf(payee), before + price + price / 2n);
      assert.equal(await world.relayerNonce(), nonce, "the relayer sent nothing");

      // The server signed nothing of them, yet counts them once the chain's events stand under enough blocks
      assert.equal(await db().x402Payment.count({ where: { allowanceId: permission.allowance_id } }), 0);
      await chain.untilBlock((await chain.client.getBlockNumber()) + CONFIRMATIONS + 1n);
      // read by the server's own run every 15 s, before any view asks: the audit log has them as the chain does
      const spendsOf = () => db().allowanceSpend.findMany({ where: { allowanceId: permission.allowance_id } });
      for (let tries = 0; (await spendsOf()).length < 2; tries++) {
        assert.ok(tries < 200, "the facilitators' redemptions are read from the chain's events without a view");
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.deepEqual(
        (await spendsOf())
          .map(({ recipient, amount, status }) => ({ recipient: getAddress(recipient), amount, status }))
          .sort((a, b) => a.amount.localeCompare(b.amount)),
        [price / 2n, price]
          .map((amount) => ({ recipient: payee, amount: String(amount), status: "landed" }))
          .sort((a, b) => a.amount.localeCompare(b.amount)),
      );
      const events = await db().auditEvent.findMany({ where: { type: "allowance.spent", credentialId } });
      const landed = events.map((event) => JSON.parse(event.data) as { allowanceId?: string; outcome?: string; by?: string });
      assert.equal(
        landed.filter((data) => data.allowanceId === permission.allowance_id && data.outcome === "landed").length,
        2,
        "each audited once, as landed",
      );
      const read = await call("get_allowance", { credential_id: credentialId });
      type Listed = { allowances: { id: string; limits: { left: string | null; transfers_left: number | null }[] }[] };
      const [limit] = (read.structuredContent as Listed).allowances.find((entry) => entry.id === permission.allowance_id)!.limits;
      assert.deepEqual([limit.left, limit.transfers_left], ["4.25", 1]);
    });

    // Last: its allowance replaces the one the tests above spend.
    it("pays a stock x402 merchant with the agent's own key: funded from the allowance, authorized by that key", async () => {
      const usdc = (await deployFiatToken(chain)).address;
      const wallet_ = getAddress(permission.from);
      await mintFiatToken(chain, usdc, wallet_, 1_000_000n);
      const facilitator = await startEip3009Facilitator(chain);
      const merchant = getAddress(privateKeyToAccount(generatePrivateKey()).address);
      const sale = await eip3009Sale({ facilitator, chainId: chain.chainId, token: usdc, resources }, merchant, PRICE);
      // a payment signed under the allowance this one replaces, not yet sent: it never pays once that one stopped
      const unsent = await signed((await prepare(transfer(payee, 1n))).delegation);
      const any = await approvedAllowance({
        permissions: [
          {
            type: "erc20-token-periodic",
            data: { tokenAddress: usdc, periodAmount: "50000", periodDuration: 86_400, maxPerPayment: "20000" },
          },
        ],
        any_payee: true,
      });
      // the allowance it replaces is disabled on chain by the relayer first
      await untilRevoked(permission.allowance_id);
      const nonce = await world.relayerNonce();
      const usdcOf = (holder: Address) =>
        chain.client.readContract({ address: usdc, abi: erc20Abi, functionName: "balanceOf", args: [holder] });
      const paying = payingFetch(wallet, {
        credentialId,
        maxPerPayment: { USDC: "0.02" },
        ownKey: { account: agentKey, permission: any, exactExecutionEnforcer },
      });
      const response = await chain.miningEvery(2000, () => paying(sale.url));
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { report: "paid content" });
      assert.equal(await usdcOf(merchant), PRICE, "the merchant was paid");
      assert.equal(await usdcOf(agentKey.address), 0n, "the agent's key held the payment only until it settled");
      assert.equal(await usdcOf(wallet_), 1_000_000n - PRICE);
      assert.equal(await world.relayerNonce(), nonce + 1, "the relayer sent the funding, and only that");
      const stale = await send(unsent);
      assert.equal(stale.isError, true);
      assert.match(stale.content[0].text, /not under one of this allowance's delegations/);
      assert.equal(await world.relayerNonce(), nonce + 1, "nothing more was sent");
      assert.equal(await chain.client.getBalance({ address: agentKey.address }), 0n, "the agent's key paid no gas");
      const [funding] = await db().allowanceSpend.findMany({ where: { allowanceId: any.allowance_id } });
      assert.equal(getAddress(funding.recipient), agentKey.address, "the server saw the funding to the agent's key");
      assert.equal(await db().x402Payment.count({ where: { allowanceId: any.allowance_id } }), 0, "and signed nothing for the merchant");

      // a merchant whose only offer the key cannot pay (another token) gets nothing signed, and nothing is funded
      const other = await eip3009Sale({ facilitator, chainId: chain.chainId, token, resources }, merchant, 1n);
      await assert.rejects(
        payingFetch(wallet, { credentialId, maxPerPayment: { TT: "1" }, ownKey: { account: agentKey, permission: any } })(other.url),
        (error: unknown) => error instanceof PaymentRefusedError && error.reason === "not_own_key_payable",
      );
      assert.equal(await world.relayerNonce(), nonce + 1);

      // The CLI's `pay` does the same with the key it keeps, for an allowance it asked for itself
      const { env } = cliEnv({ AGENT_WALLET_API_KEY: await apiKeyForCredential(credentialId, "CLI Payer"), AGENT_WALLET_URL: app.baseUrl });
      const asked = await runCli(
        [
          ...["request-allowance", "Main", "--chain", String(chain.chainId), "--amount", `0.05 ${usdc}`, "--any-payee"],
          ...["--max-per-payment", `0.02 ${usdc}`, "--payments", "3", "--why", "Pay for reports from the CLI", "--no-wait", "--json"],
        ],
        env,
      );
      assert.equal(asked.code, 0, asked.stderr);
      await person.page.goto((JSON.parse(asked.stdout) as RequestView).approval_url);
      await person.page.getByRole("button", { name: "Approve with passkey" }).click();
      await person.page.getByText(/Approved: the agent's key can now spend within this allowance/).waitFor();
      const paidBefore = await usdcOf(merchant);
      const cliPay = ["pay", "Main", sale.url, "--max", "0.02 USDC", "--exact-execution-enforcer", exactExecutionEnforcer];
      const paid = await chain.miningEvery(2000, () => runCli(cliPay, env));
      assert.equal(paid.code, 0, paid.stderr);
      assert.deepEqual(JSON.parse(paid.stdout), { report: "paid content" });
      assert.match(paid.stderr, new RegExp(`Paid 0.01 USDC to ${merchant}`));
      assert.equal(await usdcOf(merchant), paidBefore + PRICE);
    });
  });
}
