// An allowance whose delegate key the agent holds (issue 57, decision 0042), on the local chain, on SQLite
// (e2e/allowances/agent-held.test.ts) and PostgreSQL (e2e/postgres/agent-held.test.ts). Agent Wallet pays nothing from
// it: send_transaction and pay_x402 (erc7710, and eip3009 or permit2 from an agent account) are refused with
// agent_signs_payments before anything is held, signed or sent, while a payment above what is left still goes to the
// person who chose `ask`. Everything the server stores (its delegate key) redeems nothing on chain; the agent's own key
// redeems within the cap and not above it, what is left reads as for any allowance, and the person's revocation stops
// the agent's key too.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createWalletClient, decodeFunctionData, encodeFunctionData, erc20Abi, http, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { DelegationManager } from "@metamask/delegation-abis";
import { chainDefinition, fundedWallet } from "./chain";
import { requirementHeader, startX402World, type X402World } from "./x402";

const transferTo = (payee: Address, amount: bigint) =>
  encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [payee, amount] });

export function agentHeldSuite(database: "sqlite" | "postgres") {
  describe(`an allowance whose delegate key the agent holds (${database})`, { timeout: 300_000 }, () => {
    let world: X402World;
    before(async () => {
      world = await startX402World(database);
    });
    after(() => world?.stop());

    /**
     * A fresh key the agent holds, with a little ETH for gas, and the allowance of 0.05 USDC a day to one payee (or with
     * `anyPayee` to anyone, each payment at most that much) that its person delegated to it.
     */
    async function agentKeyAllowance(options: { anyPayee?: bigint; overLimit?: "ask" | "refuse" } = {}) {
      const key = privateKeyToAccount(generatePrivateKey());
      await world.chain.fund(key.address, "0.1");
      const payee = world.recipient();
      const payees = options.anyPayee === undefined ? [payee] : [];
      const held = await world.agentWithAllowance({ payees, perPeriod: 50_000n, agentDelegate: key.address, ...options });
      const wallet = createWalletClient({ account: key, chain: chainDefinition(world.chain), transport: http(world.chain.rpcUrl) });
      const { findAllowance, storedDelegation } = await import("@/lib/allowances/allowances");
      const row = (await findAllowance(held.allowanceId)).delegations[0];
      return { ...held, key, wallet, payee, row, root: storedDelegation(world.framework, row).delegation };
    }

    /** The USDC transfer of `amount` to `payee` an allowance's redemption executes. */
    const execution = (payee: Address, amount: bigint) => ({ target: world.token, value: 0n, callData: transferTo(payee, amount) });

    const mined = async (hash: Hex) => (await world.chain.client.waitForTransactionReceipt({ hash })).status;

    it("refuses send_transaction and pay_x402 by every method with agent_signs_payments, holding, signing, sending nothing", async () => {
      const { payFromAllowance } = await import("@/lib/allowances/agent");
      const { AgentSignsError } = await import("@/lib/allowances/spend");
      const { payX402 } = await import("@/lib/x402/pay");
      const { RequestError } = await import("@/lib/wallet/request-lifecycle");
      const { systemClock } = await import("@/lib/clock");
      const { db } = await import("@/lib/db");
      const { chainId } = world.chain;
      const named = await agentKeyAllowance();
      const anyPayee = await agentKeyAllowance({ anyPayee: 20_000n });
      assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: named.allowanceId } })).delegateKind, "agent");
      const balances = () => Promise.all([named.person, anyPayee.person, named.payee, anyPayee.payee].map(world.tokenBalance));
      const balancesBefore = await balances();
      const nonce = await world.relayerNonce();
      const agentSigns = (error: unknown) => {
        assert.ok(error instanceof AgentSignsError, String(error));
        assert.equal(error.code, "agent_signs_payments");
        assert.match(error.message, /key is held by the agent, which signs its own payments .* so Agent Wallet cannot pay from it/);
        return true;
      };
      const send = (amount: bigint) =>
        payFromAllowance(
          named.agent,
          named.credentialId,
          { chainId, to: world.token, value: "0", data: transferTo(named.payee, amount) },
          systemClock,
        );
      // twice: from a fresh read of the grant's allowances, then from the one the process remembers
      await assert.rejects(send(10_000n), agentSigns);
      await assert.rejects(send(10_000n), agentSigns);
      // above what is left, and the person chose `refuse`: the allowance's own refusal, as a server-held one's
      await assert.rejects(send(60_000n), (error: unknown) => error instanceof RequestError && error.code === "allowance_refused");
      await assert.rejects(payX402(named.agent, named.credentialId, (await world.report(named.payee)).required), agentSigns);
      // a stock merchant's offers, paid from an agent account for a server-held allowance: none is made for this one
      for (const extra of [{ name: "USD Coin", version: "2" }, { assetTransferMethod: "permit2" }]) {
        const asked = requirementHeader({ chainId, asset: world.token, amount: "10000", payTo: anyPayee.payee, extra });
        await assert.rejects(payX402(anyPayee.agent, anyPayee.credentialId, asked), agentSigns);
      }
      for (const { agent, allowanceId } of [named, anyPayee]) {
        assert.equal(await db().agentRequest.count({ where: { grantId: agent.grantId } }), 0, "nothing was held against the policy");
        assert.equal(await db().x402Payment.count({ where: { allowanceId } }), 0, "no payment was signed or held");
        assert.equal(await db().allowanceSpend.count({ where: { allowanceId } }), 0, "nothing was spent");
        assert.equal(await db().agentAccount.count({ where: { allowanceId } }), 0, "no agent account was made");
      }
      assert.equal(await world.relayerNonce(), nonce, "the relayer sent nothing");
      assert.deepEqual(await balances(), balancesBefore);
    });

    it("sends a payment above what is left to the person who chose ask: their own payment needs no delegate key", async () => {
      const { payFromAllowance } = await import("@/lib/allowances/agent");
      const { AgentSignsError } = await import("@/lib/allowances/spend");
      const { systemClock } = await import("@/lib/clock");
      const asking = await agentKeyAllowance({ overLimit: "ask" });
      const send = (amount: bigint) =>
        payFromAllowance(
          asking.agent,
          asking.credentialId,
          { chainId: world.chain.chainId, to: world.token, value: "0", data: transferTo(asking.payee, amount) },
          systemClock,
        );
      const above = await send(60_000n);
      assert.ok("toPerson" in above, JSON.stringify(above));
      assert.match(above.toPerson, /over your allowance/);
      await assert.rejects(send(10_000n), (error: unknown) => error instanceof AgentSignsError, "one it covers is never the person's");
    });

    it("a full copy of the server's database and secrets redeems nothing: the chain checks each delegation's delegate", async () => {
      const { delegateAccount } = await import("@/lib/allowances/delegate-key");
      const { redelegation, redeemCall } = await import("@/lib/allowances/spend");
      const held = await agentKeyAllowance();
      const serverKey = await delegateAccount();
      assert.equal(held.root.delegate, held.key.address);
      const thief = await fundedWallet(world.chain);
      const balancesBefore = await Promise.all([held.person, held.payee].map(world.tokenBalance));
      // the server's leaf to the thief, as spend.ts signs it for its relayer
      const paying = execution(held.payee, 10_000n);
      const leaf = await redelegation(world.framework, world.chain.chainId, held.row.hash as Hex, thief.account.address, paying);
      assert.equal(leaf.delegator, serverKey.address);
      const data = redeemCall([leaf, held.root], paying);
      const redeeming = decodeFunctionData({ abi: DelegationManager, data });
      if (redeeming.functionName !== "redeemDelegations") assert.fail(redeeming.functionName);
      const { args } = redeeming;
      // the DelegationManager's own refusal: the root names the agent's key as its delegate, not the server's
      await assert.rejects(
        thief.simulateContract({
          address: world.framework.DelegationManager,
          abi: DelegationManager,
          functionName: "redeemDelegations",
          args,
        }),
        /InvalidDelegate/,
      );
      const sent = await thief.sendTransaction({ to: world.framework.DelegationManager, data, gas: 1_000_000n });
      assert.equal(await mined(sent), "reverted");
      // and an x402 leaf of the server's key, settled by the facilitator past every check of lib/x402
      assert.equal((await world.settleWithStolenKey(held.allowanceId, held.payee, 10_000n)).success, false);
      assert.deepEqual(await Promise.all([held.person, held.payee].map(world.tokenBalance)), balancesBefore);
    });

    it("the agent's own key redeems within the cap and not above it, get_allowance reads what is left, revocation stops it", async () => {
      const { redeemCall } = await import("@/lib/allowances/spend");
      const { allowanceForAgent } = await import("@/lib/allowances/agent");
      const { revokeForUser } = await import("@/lib/oauth/connected-clients");
      const { sendStoredRevocations } = await import("@/lib/allowances/revocation");
      const { db } = await import("@/lib/db");
      const held = await agentKeyAllowance();
      const redeem = (amount: bigint, gas?: bigint) =>
        held.wallet.sendTransaction({
          to: world.framework.DelegationManager,
          data: redeemCall([held.root], execution(held.payee, amount)),
          ...(gas && { gas }),
        });
      assert.equal(await mined(await redeem(10_000n)), "success");
      assert.equal(await world.tokenBalance(held.payee), 10_000n);
      // 45 000 of the 40 000 left: the period's cap, on chain
      assert.equal(await mined(await redeem(45_000n, 1_000_000n)), "reverted");
      assert.equal(await world.tokenBalance(held.payee), 10_000n);
      const read = await allowanceForAgent(held.agent, held.credentialId);
      assert.equal(read.allowances[0].limits[0].left, "0.04", "0.04 USDC left");
      // the person's pre-signed revocation, relayed: signed by the person, it needs no delegate key
      const stopped = await revokeForUser(held.agent.userId, held.agent.clientId);
      await sendStoredRevocations(stopped.allowanceIds);
      assert.equal((await db().allowance.findUniqueOrThrow({ where: { id: held.allowanceId } })).status, "revoked");
      assert.deepEqual(await world.disabledOnChain([held.row.hash as Hex]), [true]);
      assert.equal(await mined(await redeem(10_000n, 1_000_000n)), "reverted");
      assert.equal(await world.tokenBalance(held.payee), 10_000n);
    });
  });
}
