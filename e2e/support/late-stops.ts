// A payment decided under its allowance's lease, then stopped before it commits (issue 55, "Also from the review"), on
// SQLite (e2e/allowances/late-stops.test.ts) and PostgreSQL (e2e/postgres/late-stops.test.ts). The app reaches the
// chain through a proxy that acts when the payment's own calls reach the node, after its fresh read of the allowance
// and before anything is sent or signed: the person's "Revoke allowance" committing, the client's access ending, the
// lease lapsing and taken over by another instance. Each time the payment is refused and nothing reaches the chain (an
// x402 payment: nothing is held, and its signature is not given).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther } from "viem";
import { signAllowanceFor, spendRefusal } from "./allowances";
import { countingProxy, type CountingProxy, type RpcCall } from "./rpc-counter";
import { startX402World, type X402World } from "./x402";

export function lateStopSuite(database: "sqlite" | "postgres") {
  describe(`a payment stopped between its checks and its send (${database})`, { timeout: 300_000 }, () => {
    let world: X402World;
    let proxy: CountingProxy;
    /** Runs once, when the next call of its method reaches the node (held there until it is done). */
    let hook: { method: string; act: () => Promise<void> } | undefined;
    let people = 0;

    before(async () => {
      world = await startX402World(database, async (chain) => {
        proxy = await countingProxy(chain.rpcUrl, {
          before: async (call: RpcCall) => {
            const due = hook;
            if (!due || call.method !== due.method) return;
            hook = undefined;
            await due.act();
          },
        });
        return proxy.rpcUrl;
      });
      // What the token is, read once and remembered: an x402 payment's first eth_call hooked here is the allowance's own.
      const { tokenMetadata } = await import("@/lib/wallet/token-metadata");
      await tokenMetadata(world.chain.chainId, world.token);
    });
    after(async () => {
      await proxy?.stop();
      await world?.stop();
    });

    const lib = async () => ({
      db: (await import("@/lib/db")).db(),
      spend: await import("@/lib/allowances/spend"),
      lease: await import("@/lib/allowances/lease"),
    });

    /** A person of their own (their own gas budget) with 1 ETH and an allowance of the coin to a new shop. */
    async function personWithAllowance() {
      const person = await world.newPerson("1");
      const owner = { userId: `u_late_${++people}`, credentialId: `cr_${person.address}` };
      const shop = world.recipient();
      const { id } = await signAllowanceFor(world.chain, person, owner, { recipients: [shop], transactions: 100 });
      return { person, ...owner, allowanceId: id, shop };
    }

    /** What the allowance had relayed and recorded as spent: nothing of a payment refused before its send. */
    async function relayedFor(allowanceId: string) {
      const { db } = await lib();
      const relayed = await db.relayedTransaction.findMany({ where: { allowanceId }, orderBy: { createdAt: "asc" } });
      return { purposes: relayed.map((row) => row.purpose), spends: await db.allowanceSpend.count({ where: { allowanceId } }) };
    }

    async function until(condition: () => Promise<boolean>) {
      for (let attempt = 0; !(await condition()); attempt++) {
        assert.ok(attempt < 500, "the condition never held");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    it("a transfer checked before the person's Revoke allowance commits is refused, not active: only the revocation is sent", async () => {
      const { db, spend } = await lib();
      const { revokeAllowances, prepareRevocation } = await import("@/lib/allowances/revocation");
      const { signRevocation } = await import("@/lib/allowances/revocation-operation");
      const { person, userId, allowanceId, shop } = await personWithAllowance();
      const prepared = await prepareRevocation(userId, [allowanceId]);
      const signature = await signRevocation(person, prepared);
      const sent = await world.relayerNonce();
      let revoking: Promise<{ txHash: string | null }> | undefined;
      // The relayer's nonce is read once the spend has read the allowance and the chain: the person revokes then.
      hook = {
        method: "eth_getTransactionCount",
        act: async () => {
          revoking = revokeAllowances(userId, [allowanceId], { nonce: prepared.nonce, signature });
          await until(async () => (await db.allowance.findUniqueOrThrow({ where: { id: allowanceId } })).status === "revoking");
        },
      };
      const refused = await spendRefusal(spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") }));
      assert.equal(hook, undefined, "the revocation came between the spend's checks and its send");
      assert.equal(refused.reason, "not_active");
      assert.match(refused.message, /This allowance has been revoked/);
      await revoking;
      assert.equal(await world.relayerNonce(), sent + 1, "the revocation alone was sent");
      assert.equal(await world.balance(shop), 0n);
      assert.deepEqual(await relayedFor(allowanceId), { purposes: ["revocation"], spends: 0 });
      assert.equal((await db.allowance.findUniqueOrThrow({ where: { id: allowanceId } })).status, "revoked");
    });

    it("an x402 payment read as active, its client's access ended before it is held: refused, nothing held or given", async () => {
      const { db } = await lib();
      const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
      const { stopAllowancesIn } = await import("@/lib/allowances/stop");
      const payee = world.recipient();
      const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 50_000n });
      const { required } = await world.report(payee);
      // The allowance's first payment asks the chain what is left, under its lease, after reading the allowance.
      hook = {
        method: "eth_call",
        act: async () => {
          await db.$transaction((tx) =>
            stopAllowancesIn(tx, { grantId: agent.grantId, credentialId, chainId: world.chain.chainId }, "its client's access ended"),
          );
        },
      };
      // the resource takes no payment the person could make by one tap: the allowance's refusal stands
      await assert.rejects(payX402(agent, credentialId, required), (error: unknown) => {
        assert.ok(error instanceof X402AllowanceRefusal, String(error));
        assert.equal(error.message, "This allowance is no longer live. Nothing was signed.");
        return true;
      });
      assert.equal(hook, undefined, "the stop came between the payment's read and its hold");
      assert.equal(await db.x402Payment.count({ where: { allowanceId } }), 0, "nothing is held");
      assert.equal((await db.allowance.findUniqueOrThrow({ where: { id: allowanceId } })).status, "revoking");
    });

    it("an x402 payment whose allowance's lease lapsed and was taken over before it is held: refused, nothing held or given", async () => {
      const { db, lease } = await lib();
      const { payX402 } = await import("@/lib/x402/pay");
      const payee = world.recipient();
      const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 50_000n });
      const { required } = await world.report(payee);
      const key = `allowance:${allowanceId}`;
      // The first payment asks the chain what is left under the lease: another instance takes the lease over then.
      hook = {
        method: "eth_call",
        act: async () => {
          await db.lease.update({ where: { key }, data: { holder: "ls_another_instance", until: new Date(Date.now() + 30_000) } });
        },
      };
      try {
        await assert.rejects(payX402(agent, credentialId, required), (error: unknown) => {
          assert.ok(error instanceof lease.LeaseLostError, String(error));
          assert.equal(error.code, "lease_lost");
          return true;
        });
        assert.equal(hook, undefined, "the lease was taken over between the payment's read and its hold");
        assert.equal(await db.x402Payment.count({ where: { allowanceId } }), 0, "nothing is held");
      } finally {
        await db.lease.deleteMany({ where: { key, holder: "ls_another_instance" } });
      }
      // The other holder done, the allowance pays again.
      const paid = await payX402(agent, credentialId, required);
      assert.equal(paid.allowance_id, allowanceId);
      assert.equal(await db.x402Payment.count({ where: { allowanceId } }), 1);
    });

    for (const which of ["allowance", "relayer"] as const) {
      it(`a spend whose ${which}'s lease lapsed and was taken over by another instance before its send sends nothing`, async () => {
        const { db, spend, lease } = await lib();
        const { allowanceId, shop } = await personWithAllowance();
        const key = which === "allowance" ? `allowance:${allowanceId}` : `relayer:${world.chain.chainId}:${world.relayer}`;
        const sent = await world.relayerNonce();
        // Another instance found the lease past its time (this holder stalled) and took it.
        hook = {
          method: "eth_getTransactionCount",
          act: async () => {
            await db.lease.update({ where: { key }, data: { until: new Date(Date.now() - 1_000) } });
            await db.lease.update({ where: { key }, data: { holder: "ls_another_instance", until: new Date(Date.now() + 30_000) } });
          },
        };
        try {
          await assert.rejects(spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") }), (error: unknown) => {
            assert.ok(error instanceof lease.LeaseLostError, String(error));
            assert.equal(error.code, "lease_lost");
            assert.match(error.message, new RegExp(`The ${which}'s lease lapsed .* nothing was sent`));
            return true;
          });
          assert.equal(hook, undefined, "the lease was taken over between the spend's checks and its send");
          assert.equal(await world.relayerNonce(), sent, "nothing was sent");
          assert.equal(await world.balance(shop), 0n);
          assert.deepEqual(await relayedFor(allowanceId), { purposes: [], spends: 0 });
        } finally {
          await db.lease.deleteMany({ where: { key, holder: "ls_another_instance" } });
        }
        // The other holder done, the allowance pays again.
        await spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") });
        assert.equal(await world.balance(shop), parseEther("0.001"));
      });
    }
  });
}
