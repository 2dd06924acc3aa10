// The relayer against accounts of their own (issue: "a relayer no one can drain"), on a real hardhat chain with the
// Delegation Framework: an address re-pointed at code that is a DeleGator only in simulations, a recipient that takes
// the coin only in simulations, a recipient closed between the simulation and the block, a stale authorization,
// dust payments, a person's gas budget, revocations one account cannot sink for others, expired allowances, a node
// that errs, a slow receipt. Each case counts what the relayer sent: nothing it should not have paid for.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { parseEther, type Address } from "viem";
import {
  assertConcurrentSpendsWithinTheBudget,
  signAllowanceFor,
  signedAllowanceFor,
  spendRefusal,
  startAllowanceWorld,
  type AllowanceWorld,
} from "../support/allowances";
import { deployGate, deployPicky, repointAtMimic } from "../support/hostile-contracts";
import { countingProxy, type CountingProxy, type RpcCall } from "../support/rpc-counter";
import type { AllowanceSpec } from "@/lib/allowances/caveats";

const run = promisify(execFile);

/** Per person a day, as this file's operator set it: a few payments' worth. */
const GAS_BUDGET = 1_500_000n;

describe("the relayer pays only for what it should", { timeout: 600_000 }, () => {
  let world: AllowanceWorld;
  let proxy: CountingProxy;
  /** What the proxy does to the next calls reaching the node through it (the app's calls). */
  let intercept: ((call: RpcCall) => Promise<{ code: number; message: string } | void>) | undefined;
  let lib: {
    spend: typeof import("@/lib/allowances/spend");
    resend: typeof import("@/lib/allowances/resend");
    person: typeof import("@/lib/allowances/person");
    clients: typeof import("@/lib/oauth/connected-clients");
    db: typeof import("@/lib/db");
  };
  let people = 0;

  before(async () => {
    world = await startAllowanceWorld({
      database: "sqlite",
      rpcUrl: async (chain) => {
        proxy = await countingProxy(chain.rpcUrl, { before: (call) => intercept?.(call) ?? Promise.resolve() });
        return proxy.rpcUrl;
      },
      env: { ALLOWANCE_GAS_BUDGET: String(GAS_BUDGET) },
    });
    lib = {
      spend: await import("@/lib/allowances/spend"),
      resend: await import("@/lib/allowances/resend"),
      person: await import("@/lib/allowances/person"),
      clients: await import("@/lib/oauth/connected-clients"),
      db: await import("@/lib/db"),
    };
  });
  after(async () => {
    await proxy?.stop();
    await world?.stop();
  });

  /** A person of their own (their own gas budget) with `ether`, and an allowance of theirs to `recipients`. */
  async function personWithAllowance(ether: string, overrides: Partial<AllowanceSpec> & { recipients: Address[] }) {
    const person = await world.newPerson(ether);
    const owner = { userId: `u_relayer_${++people}`, credentialId: `cr_${person.address}` };
    const { id, hashes } = await signAllowanceFor(world.chain, person, owner, { transactions: 100, ...overrides });
    return { person, ...owner, allowanceId: id, hashes };
  }

  const allowance = (id: string) => lib.db.db().allowance.findUniqueOrThrow({ where: { id } });
  const events = async (type: string, allowanceId: string) =>
    (await lib.db.db().auditEvent.findMany({ where: { type } }))
      .map((event) => JSON.parse(event.data))
      .filter((data) => data.allowanceId === allowanceId);

  it("an address re-pointed at code that is a DeleGator only in simulations: nothing sent, the allowance waits", async () => {
    const shop = world.recipient();
    const { person, userId, allowanceId } = await personWithAllowance("1", { recipients: [shop] });
    await repointAtMimic(world.chain, person, world.framework.implementations.EIP7702StatelessDeleGatorImpl);
    const nonce = await world.relayerNonce();
    for (let attempt = 0; attempt < 3; attempt++) {
      const error = await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") }));
      assert.equal(error.reason, "suspended");
      assert.match(error.message, /paused until its owner reviews it on Clients: its wallet's address now runs other code/);
    }
    assert.equal(await world.relayerNonce(), nonce, "the relayer sent nothing");
    assert.equal(await world.balance(shop), 0n);
    const held = await allowance(allowanceId);
    assert.deepEqual([held.status, held.attention], ["suspended", "code_changed"]);
    assert.equal((await events("allowance.suspended", allowanceId)).length, 1, "recorded once");
    // The person looks: it cannot pay again while the address runs the other code.
    await assert.rejects(lib.person.resumeAllowanceForUser(userId, allowanceId), /runs other code than the DeleGator/);
    assert.equal((await allowance(allowanceId)).status, "suspended");
  });

  it("a recipient that takes the coin only in simulations costs the relayer one transaction: the allowance is then suspended", async () => {
    // The rehearsal carries the fees the transaction will (geth and reth then run it at the block's base fee); hardhat
    // runs every eth_call at a base fee of 0, so here the first payment goes out, reverts, and pauses the allowance.
    const picky = await deployPicky(world.chain);
    const { allowanceId } = await personWithAllowance("1", { recipients: [picky] });
    const nonce = await world.relayerNonce();
    await assert.rejects(lib.spend.spendFromAllowance(allowanceId, { to: picky, value: parseEther("0.001") }), /reverted on chain/);
    for (let attempt = 0; attempt < 3; attempt++) {
      assert.equal(
        (await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: picky, value: parseEther("0.001") }))).reason,
        "suspended",
      );
    }
    assert.equal(await world.relayerNonce(), nonce + 1, "one transaction, not one per attempt");
    assert.equal((await allowance(allowanceId)).attention, "relay_reverted");
  });

  it("a relay that reverts anyway (its recipient closed in between) is paid once, then the allowance waits for the person", async () => {
    const gate = await deployGate(world.chain);
    const { userId, allowanceId } = await personWithAllowance("1", { recipients: [gate.address] });
    // The recipient's owner sees the relayer's transaction and closes the gate before it is mined.
    intercept = async (call) => {
      if (call.method !== "eth_sendRawTransaction") return;
      intercept = undefined;
      await gate.close();
    };
    const nonce = await world.relayerNonce();
    await assert.rejects(
      lib.spend.spendFromAllowance(allowanceId, { to: gate.address, value: parseEther("0.001") }),
      /reverted on chain; nothing was paid\. This allowance is paused until its owner reviews it on Clients/,
    );
    assert.equal(await world.relayerNonce(), nonce + 1);
    const held = await allowance(allowanceId);
    assert.deepEqual([held.status, held.attention], ["suspended", "relay_reverted"]);
    const relayed = await lib.db.db().relayedTransaction.findMany({ where: { allowanceId } });
    assert.deepEqual(
      relayed.map((row) => row.status),
      ["reverted"],
    );
    assert.ok(BigInt(relayed[0].feePaid!) > 0n, "what it cost is on record");
    // Paused: the next one is not sent.
    assert.equal(
      (await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: gate.address, value: 1_000_000_000_000n }))).reason,
      "suspended",
    );
    assert.equal(await world.relayerNonce(), nonce + 1);
    // The person looks and resumes it: its account still runs the DeleGator, so it may pay again.
    await lib.person.resumeAllowanceForUser(userId, allowanceId);
    assert.deepEqual(await allowance(allowanceId).then((row) => [row.status, row.attention]), ["active", null]);
    assert.equal((await events("allowance.resumed", allowanceId)).length, 1);
  });

  it("refuses a 7702 authorization signed for a stale nonce before relaying it", async () => {
    const person = await world.newPerson("1");
    const { input, now } = await signedAllowanceFor(
      world.chain,
      person,
      { userId: `u_relayer_${++people}`, credentialId: `cr_${person.address}` },
      { recipients: [world.recipient()] },
    );
    const stale = await person.signAuthorization({
      chainId: world.chain.chainId,
      contractAddress: world.framework.implementations.EIP7702StatelessDeleGatorImpl,
      nonce: 7,
    });
    const nonce = await world.relayerNonce();
    const { createAllowance } = await import("@/lib/allowances/allowances");
    await assert.rejects(createAllowance({ ...input, authorization: stale }, now), /signed for nonce 7, but the account is at 0/);
    assert.equal(await world.relayerNonce(), nonce, "the relayer sent nothing");
    assert.equal(await world.chain.client.getCode({ address: person.address }), undefined);
  });

  it("refuses dust: a payment worth less than the gas it costs is not relayed", async () => {
    const shop = world.recipient();
    const { allowanceId } = await personWithAllowance("1", { recipients: [shop] });
    const nonce = await world.relayerNonce();
    const error = await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: shop, value: 1n }));
    assert.equal(error.reason, "below_minimum");
    assert.match(error.message, /at least 0\.000001 of the chain's coin/);
    assert.equal(await world.relayerNonce(), nonce);
  });

  it("holds each person to the gas budget of a day, counted in the database; the refusal says when it frees", async () => {
    const shop = world.recipient();
    const { userId, allowanceId } = await personWithAllowance("1", { recipients: [shop] });
    let paid = 0;
    let refused: InstanceType<typeof lib.spend.AllowanceRefusal> | undefined;
    while (!refused && paid < 20) {
      try {
        await lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.0001") });
        paid++;
      } catch (error) {
        refused = await spendRefusal(Promise.reject(error));
      }
    }
    assert.ok(refused, "the budget ran out");
    assert.equal(refused.reason, "relay_unavailable");
    assert.match(
      refused.message,
      /as much gas for your allowances on Local dev chain in the last 24 hours as it pays for one person; payments from allowances resume/,
    );
    assert.ok(paid >= 2 && paid <= 5, `paid ${paid} times within ${GAS_BUDGET} gas`);
    const relayed = await lib.db.db().relayedTransaction.findMany({ where: { userId } });
    const gas = relayed.reduce((sum, row) => sum + BigInt(row.gasUsed ?? row.gasLimit), 0n);
    assert.ok(gas <= GAS_BUDGET, `${gas} gas relayed`);
    assert.deepEqual(new Set(relayed.map((row) => row.purpose)), new Set(["authorization", "payment"]));
    // Concurrent payments from two allowances of one person share the budget.
    await assertConcurrentSpendsWithinTheBudget(world, GAS_BUDGET);
    // Another person's budget is their own.
    const other = await personWithAllowance("1", { recipients: [shop] });
    await lib.spend.spendFromAllowance(other.allowanceId, { to: shop, value: parseEther("0.0001") });
  });

  it("the operator reads what the relayer spent per person (npm run relayer:spending)", async () => {
    // Not spawnSync: the chain's proxy answers from this process.
    const result = await run("npm", ["run", "--silent", "relayer:spending"], { env: process.env, encoding: "utf8", timeout: 60_000 });
    assert.match(result.stdout, new RegExp(`^Local dev chain \\(chain 31337\\): relayer ${world.relayer} holds [\\d.]+ ETH$`, "m"));
    const rows = await lib.db.db().relayedTransaction.groupBy({ by: ["userId"], _count: true });
    for (const row of rows.filter((entry) => entry.userId)) {
      assert.match(
        result.stdout,
        new RegExp(`${row.userId}: ${row._count} transaction\\(s\\), \\d+ reverted, \\d+ gas, [\\d.]+ ETH in fees`),
      );
    }
    assert.match(result.stdout, /1 reverted/, "the reverted relay is counted");
  });

  it("revocations go one account at a time: an account whose code changed neither sinks another's nor is sent again", async () => {
    const honest = await personWithAllowance("0", { recipients: [world.recipient()] });
    const attacker = await personWithAllowance("1", { recipients: [world.recipient()] });
    await repointAtMimic(world.chain, attacker.person, world.framework.implementations.EIP7702StatelessDeleGatorImpl);
    // Both stopped here while the chain was unreachable: due for a resend.
    await lib.db.db().allowance.updateMany({
      where: { id: { in: [honest.allowanceId, attacker.allowanceId] } },
      data: { status: "revoking", revocationSentAt: null },
    });
    const nonce = await world.relayerNonce();
    await lib.resend.resendDueRevocations();
    assert.equal(await world.relayerNonce(), nonce + 1, "one transaction: the honest account's revocation");
    assert.deepEqual(
      await world.disabledOnChain(honest.hashes),
      honest.hashes.map(() => true),
    );
    assert.equal((await allowance(honest.allowanceId)).status, "revoked");
    const held = await allowance(attacker.allowanceId);
    assert.deepEqual([held.status, held.attention], ["revoking", "code_changed"]);
    // The next runs send nothing for it.
    await lib.db.db().allowance.updateMany({ where: { id: attacker.allowanceId }, data: { revocationSentAt: null } });
    await lib.resend.resendDueRevocations();
    assert.equal(await world.relayerNonce(), nonce + 1);
  });

  it("sends no revocation for an allowance that has expired: it ends here, at no cost", async () => {
    const { credentialId, allowanceId } = await personWithAllowance("0", { recipients: [world.recipient()] });
    await lib.db.db().allowance.update({ where: { id: allowanceId }, data: { expiresAt: new Date(Date.now() - 3_600_000) } });
    const { stopAllowancesIn } = await import("@/lib/allowances/stop");
    const nonce = await world.relayerNonce();
    const stopped = await lib.db.db().$transaction((tx) => stopAllowancesIn(tx, { credentialId }, "you removed its wallet"));
    assert.deepEqual(stopped.allowanceIds, [], "nothing to send");
    assert.deepEqual(
      stopped.events.map((event) => event.data),
      [{ allowanceId, chainId: world.chain.chainId, reason: "you removed its wallet", expired: true, revocationStored: true }],
    );
    assert.equal((await allowance(allowanceId)).status, "revoked");
    await lib.resend.resendDueRevocations();
    assert.equal(await world.relayerNonce(), nonce, "the relayer sent nothing");
  });

  it("a node that errs is no proof a payment is gone: the next spend is refused busy, and the payment stays held", async () => {
    const shop = world.recipient();
    const { allowanceId } = await personWithAllowance("1", { recipients: [shop] });
    const first = await lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") });
    // As a process that stopped before the receipt leaves it.
    await lib.db.db().allowanceSpend.update({ where: { id: first.spendId }, data: { status: "sent" } });
    intercept = async (call) => {
      if (call.method === "eth_getTransactionReceipt" || call.method === "eth_getTransactionByHash")
        return { code: -32603, message: "internal error" };
    };
    try {
      const nonce = await world.relayerNonce();
      await assert.rejects(
        lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") }),
        /cannot be confirmed just now/,
      );
      assert.equal(await world.relayerNonce(), nonce);
      assert.equal((await lib.db.db().allowanceSpend.findUniqueOrThrow({ where: { id: first.spendId } })).status, "sent");
    } finally {
      intercept = undefined;
    }
    await lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") });
    assert.equal((await lib.db.db().allowanceSpend.findUniqueOrThrow({ where: { id: first.spendId } })).status, "landed");
  });

  it("a receipt slower than a minute leaves the payment pending, its lease freed once it was recorded as sent", async () => {
    const shop = world.recipient();
    const { allowanceId } = await personWithAllowance("1", { recipients: [shop] });
    await world.chain.client.request({ method: "evm_setAutomine" as never, params: [false] as never });
    try {
      const spending = lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") });
      // Once its transaction is recorded, sent and waiting in the pool:
      while (!(await lib.db.db().allowanceSpend.count({ where: { allowanceId, status: "sent" } })))
        await new Promise((resolve) => setTimeout(resolve, 100));
      const lease = await lib.db.db().lease.findUnique({ where: { key: `allowance:${allowanceId}` } });
      assert.equal(lease, null, "the allowance's next payment may start: it counts this one as in flight");
      const spent = await spending;
      assert.equal(spent.outcome, "pending");
      assert.equal((await lib.db.db().allowanceSpend.findUniqueOrThrow({ where: { id: spent.spendId } })).status, "sent");
    } finally {
      await world.chain.client.request({ method: "evm_setAutomine" as never, params: [true] as never });
      await world.chain.client.request({ method: "evm_mine" as never, params: [] as never });
    }
  });

  it("revoking client X with a body that names client Y's allowance is refused, and Y's allowance stays live", async () => {
    const { createUser } = await import("../support/oauth");
    const { randomId } = await import("@/lib/crypto");
    const user = await createUser();
    const grants: string[] = [];
    for (const name of ["X", "Y"]) {
      const client = await lib.db.db().client.create({ data: { id: randomId("c_"), kind: "oauth", name } });
      grants.push(
        (await lib.db.db().grant.create({ data: { id: randomId("g_"), userId: user.id, clientId: client.id, scope: "mcp" } })).id,
      );
    }
    const person = await world.newPerson("0");
    const owner = { userId: user.id, credentialId: `cr_${person.address}` };
    await signAllowanceFor(world.chain, person, { ...owner, grantId: grants[0] }, { recipients: [world.recipient()] });
    const ofY = await signAllowanceFor(world.chain, person, { ...owner, grantId: grants[1] }, { recipients: [world.recipient()] });
    const clientX = (await lib.db.db().grant.findUniqueOrThrow({ where: { id: grants[0] } })).clientId;
    const nonce = await world.relayerNonce();
    await assert.rejects(
      lib.clients.revokeClientForUser(user.id, clientX, {
        revocations: [{ allowanceIds: [ofY.id], nonce: "0", signature: `0x${"11".repeat(65)}` }],
      }),
      /names an allowance that is not this client's/,
    );
    assert.equal((await allowance(ofY.id)).status, "active");
    assert.equal((await lib.db.db().grant.findUniqueOrThrow({ where: { id: grants[0] } })).status, "active", "nothing changed");
    assert.equal(await world.relayerNonce(), nonce);
  });
});
