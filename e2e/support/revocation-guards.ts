// The relayer pays for revocations as it pays for payments: only for what will land. Run on SQLite and on PostgreSQL
// (e2e/allowances/revocation-guards.test.ts, e2e/postgres/revocation-guards.test.ts) against a real hardhat chain with
// the Delegation Framework: the largest allowance the form allows revoked both ways (signed now, and stored with it),
// a delegation the person disabled from their own address, a stored revocation signed with a gas limit too short, an
// address re-pointed at other code, a paid failure that is not paid twice, a person's revocation budget and rate
// limit, a revoked client revoked again, a revocation whose nonce another transaction took. Each case counts the
// relayer's transactions: unchanged means nothing was sent.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createWalletClient, http, parseEther, parseGwei, parseUnits, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { PrivateKeyAccount } from "viem/accounts";
import { DelegationManager } from "@metamask/delegation-abis";
import { signAllowanceFor, startAllowanceWorld, type AllowanceWorld } from "./allowances";
import { chainDefinition } from "./chain";
import { deployErc20 } from "./contracts";
import { repointAtMimic } from "./hostile-contracts";
import type { AllowanceSpec } from "@/lib/allowances/caveats";
import { localRelayerKey } from "@/lib/allowances/settings";

/** What this file's operator lets the relayer pay per person a day for revocations: two of the largest allowance's. */
const REVOCATION_GAS_BUDGET = 3_000_000;

/** `blockMs`: the chain mines a block that often, with a mempool, as a real chain (else each transaction at once). */
export function revocationGuardSuite(database: "sqlite" | "postgres", options: { blockMs?: number } = {}) {
  const blocks = options.blockMs ? `, ${options.blockMs / 1000}-second blocks` : "";
  describe(`the relayer pays only for revocations that land (${database}${blocks})`, { timeout: 900_000 }, () => {
    let world: AllowanceWorld;
    let tokens: Address[];
    let people = 0;
    let lib: {
      revocation: typeof import("@/lib/allowances/revocation");
      operation: typeof import("@/lib/allowances/revocation-operation");
      allowances: typeof import("@/lib/allowances/allowances");
      clients: typeof import("@/lib/oauth/connected-clients");
      db: typeof import("@/lib/db");
    };

    before(async () => {
      world = await startAllowanceWorld({ database, env: { ALLOWANCE_REVOCATION_GAS_BUDGET: String(REVOCATION_GAS_BUDGET) } });
      lib = {
        revocation: await import("@/lib/allowances/revocation"),
        operation: await import("@/lib/allowances/revocation-operation"),
        allowances: await import("@/lib/allowances/allowances"),
        clients: await import("@/lib/oauth/connected-clients"),
        db: await import("@/lib/db"),
      };
      const { MAX_DELEGATIONS } = await import("@/lib/allowances/caveats");
      const holder = world.recipient();
      tokens = [];
      for (let index = 0; index < MAX_DELEGATIONS; index++)
        tokens.push(await deployErc20(world.chain, { name: `Token ${index}`, symbol: `T${index}`, supply: parseUnits("1", 24), holder }));
      if (options.blockMs) await world.chain.mineEvery(options.blockMs);
    });
    after(() => world?.stop());

    /** A person of their own (their own budget and rate limit), with `ether` in their wallet. */
    async function newPerson(ether = "0") {
      const person = await world.newPerson(ether);
      return { person, userId: `u_revoker_${database}_${++people}`, credentialId: `cr_${person.address}` };
    }

    type Owner = Awaited<ReturnType<typeof newPerson>>;

    /** An allowance of `shape`: `recipients` payees of the coin and of each of `tokens` (the form's largest is 12 delegations). */
    async function allowanceOf({ person, userId, credentialId }: Owner, shape: { tokens: number; recipients: number; native: boolean }) {
      const overrides: Partial<AllowanceSpec> & { recipients: Address[] } = {
        recipients: Array.from({ length: shape.recipients }, () => world.recipient()),
        native: shape.native ? parseEther("0.01") : undefined,
        tokens: tokens.slice(0, shape.tokens).map((address) => ({ address, perPeriod: parseUnits("10", 18) })),
      };
      return signAllowanceFor(world.chain, person, { userId, credentialId }, overrides);
    }

    /** The person signs the disabling of what is still enabled of `ids`, as the browser does, and asks for it. */
    async function signAndRevoke({ person, userId }: Owner, ids: string[]) {
      const prepared = await lib.revocation.prepareRevocation(userId, ids);
      const signature = await lib.operation.signRevocation(person, prepared);
      return lib.revocation.revokeAllowances(userId, ids, { nonce: prepared.nonce, signature });
    }

    /** Stopped here (its client revoked, say), then its stored revocation sent, as stop.ts does once that commits. */
    async function stopAndSendStored(id: string) {
      await lib.db.db().allowance.update({ where: { id }, data: { status: "revoking" } });
      return lib.revocation.sendStoredRevocations([id]);
    }

    const allowance = (id: string) => lib.db.db().allowance.findUniqueOrThrow({ where: { id } });

    /** The person disables one of their delegations themselves, from their own address, paying for it. */
    async function disableOwn(person: PrivateKeyAccount, allowanceId: string, hash: Hex, options: { wait?: boolean; tip?: bigint } = {}) {
      const row = await lib.db.db().allowanceDelegation.findUniqueOrThrow({ where: { hash } });
      assert.equal(row.allowanceId, allowanceId);
      const wallet = createWalletClient({ account: person, chain: chainDefinition(world.chain), transport: http(world.chain.rpcUrl) });
      const sent = await wallet.writeContract({
        address: world.framework.DelegationManager,
        abi: DelegationManager,
        functionName: "disableDelegation",
        args: [lib.allowances.parseStoredDelegation(row.signed)],
        gas: 200_000n,
        ...(options.tip && { maxPriorityFeePerGas: options.tip, maxFeePerGas: parseUnits("100", 9) }),
      });
      if (options.wait !== false) await world.chain.client.waitForTransactionReceipt({ hash: sent });
    }

    it("revokes the largest allowance the form allows, signed now or stored with it: every delegation disabled", async () => {
      for (const shape of [
        { tokens: 1, recipients: 11, native: true },
        { tokens: 12, recipients: 1, native: false },
      ]) {
        const owner = await newPerson();
        const signedNow = await allowanceOf(owner, shape);
        const stored = await allowanceOf(owner, shape);
        assert.equal(signedNow.hashes.length, 12);
        const nonce = await world.relayerNonce();
        const { txHash } = await signAndRevoke(owner, [signedNow.id]);
        assert.ok(txHash);
        await stopAndSendStored(stored.id);
        assert.equal(await world.relayerNonce(), nonce + 2, "one transaction each");
        for (const { id, hashes } of [signedNow, stored]) {
          assert.deepEqual(
            await world.disabledOnChain(hashes),
            hashes.map(() => true),
          );
          const row = await allowance(id);
          assert.deepEqual([row.status, row.attention], ["revoked", null]);
          const receipt = await world.chain.client.getTransactionReceipt({ hash: row.revocationTx as Hex });
          assert.equal(receipt.status, "success");
        }
      }
    });

    it("leaves out a delegation the person disabled themselves, and sends no stored revocation that would fail for it", async () => {
      const owner = await newPerson("1");
      const signed = await allowanceOf(owner, { tokens: 2, recipients: 2, native: true });
      const stored = await allowanceOf(owner, { tokens: 2, recipients: 2, native: true });
      await disableOwn(owner.person, signed.id, signed.hashes[0]);
      await disableOwn(owner.person, stored.id, stored.hashes[0]);
      const nonce = await world.relayerNonce();
      // The stored one disables every delegation, one of which is disabled already: its batch would revert inside
      // handleOps, which succeeds and is paid. Refused by the rehearsal instead, and held for the person.
      await assert.rejects(stopAndSendStored(stored.id), /would refuse the stored revocation \(AlreadyDisabled\); nothing was sent/);
      assert.equal(await world.relayerNonce(), nonce, "nothing sent");
      assert.deepEqual([(await allowance(stored.id)).status, (await allowance(stored.id)).attention], ["revoking", "revocation_refused"]);
      // The person signs the disabling of what is left, for both: one transaction each, every delegation disabled.
      const prepared = await lib.revocation.prepareRevocation(owner.userId, [signed.id]);
      assert.equal(prepared.delegations.length, signed.hashes.length - 1, "the disabled one is not asked for");
      for (const { id } of [signed, stored]) await signAndRevoke(owner, [id]);
      assert.equal(await world.relayerNonce(), nonce + 2);
      for (const { id, hashes } of [signed, stored]) {
        assert.deepEqual(
          await world.disabledOnChain(hashes),
          hashes.map(() => true),
        );
        assert.equal((await allowance(id)).status, "revoked");
      }
    });

    it("sends a stored revocation signed with the old gas limit only where the rehearsal shows it is enough", async () => {
      const owner = await newPerson();
      const small = await allowanceOf(owner, { tokens: 1, recipients: 1, native: true });
      const large = await allowanceOf(owner, { tokens: 2, recipients: 3, native: true });
      // Signed as revocations were before their gas was sized: 80,000 + 40,000 a delegation.
      for (const { id } of [small, large]) {
        const row = await lib.db.db().allowance.findUniqueOrThrow({ where: { id }, include: { delegations: true } });
        const delegations = row.delegations.map((delegation) => lib.allowances.parseStoredDelegation(delegation.signed));
        const operation = lib.operation.presignedRevocation(
          world.framework,
          owner.person.address,
          delegations,
          lib.operation.legacyRevocationCallGas,
        );
        const signature = await owner.person.signTypedData(
          lib.operation.operationTypedData(world.framework, world.chain.chainId, operation),
        );
        await lib.db.db().allowance.update({ where: { id }, data: { revocationSignature: signature } });
      }
      const nonce = await world.relayerNonce();
      await stopAndSendStored(small.id);
      assert.equal((await allowance(small.id)).status, "revoked", "two delegations: the old limit was enough");
      // Seven delegations run out of gas inside handleOps under the old limit: nothing is sent, the person signs anew.
      await assert.rejects(stopAndSendStored(large.id), /would refuse the stored revocation \(.+\); nothing was sent/);
      assert.equal(await world.relayerNonce(), nonce + 1, "only the small one's");
      assert.equal((await allowance(large.id)).attention, "revocation_refused");
      await signAndRevoke(owner, [large.id]);
      assert.deepEqual(
        await world.disabledOnChain(large.hashes),
        large.hashes.map(() => true),
      );
    });

    it("relays nothing for an address re-pointed at other code, signed now or stored", async () => {
      const owner = await newPerson("1");
      const signed = await allowanceOf(owner, { tokens: 0, recipients: 1, native: true });
      const stored = await allowanceOf(owner, { tokens: 0, recipients: 1, native: true });
      const prepared = await lib.revocation.prepareRevocation(owner.userId, [signed.id]);
      const signature = await lib.operation.signRevocation(owner.person, prepared);
      await repointAtMimic(world.chain, owner.person, world.framework.implementations.EIP7702StatelessDeleGatorImpl);
      const nonce = await world.relayerNonce();
      await assert.rejects(
        lib.revocation.revokeAllowances(owner.userId, [signed.id], { nonce: prepared.nonce, signature }),
        /no longer runs the DeleGator/,
      );
      await assert.rejects(stopAndSendStored(stored.id), /no longer runs the DeleGator/);
      assert.equal(await world.relayerNonce(), nonce, "nothing sent");
      assert.equal((await allowance(stored.id)).attention, "code_changed");
    });

    it("pays for one revocation the chain refuses, and relays no other of that allowance", async () => {
      const owner = await newPerson("1");
      const { id, hashes } = await allowanceOf(owner, { tokens: 1, recipients: 1, native: true });
      const nonce = await world.relayerNonce();
      // The rehearsal passes; then, before the block, the person's own disabling of one delegation goes first (a
      // higher tip): the relayer's transaction lands, and its batch reverts inside handleOps.
      let revoking: Promise<unknown> | undefined;
      await world.chain.holdingBlocks(async () => {
        revoking = signAndRevoke(owner, [id]).catch((error: unknown) => error);
        while ((await world.chain.client.getTransactionCount({ address: world.relayer, blockTag: "pending" })) === nonce)
          await new Promise((resolve) => setTimeout(resolve, 50));
        await disableOwn(owner.person, id, hashes[0], { wait: false, tip: parseUnits("50", 9) });
      });
      const failed = await revoking;
      assert.match(String(failed), /did not disable the allowances; they stay stopped here, and the relayer pays for no other/);
      assert.equal(await world.relayerNonce(), nonce + 1, "paid once");
      assert.deepEqual([(await allowance(id)).status, (await allowance(id)).attention], ["revoking", "revocation_reverted"]);
      // Signing again, and its stored revocation, are refused before anything is sent.
      await assert.rejects(signAndRevoke(owner, [id]), /pays for no other/);
      await assert.rejects(
        lib.revocation.revokeAllowances(owner.userId, [id], { nonce: "0", signature: `0x${"11".repeat(65)}` }),
        /pays for no other/,
      );
      await lib.revocation.sendStoredRevocations([id]);
      assert.equal(await world.relayerNonce(), nonce + 1, "nothing more");
    });

    it("holds a person's revocations to a gas budget of their own, which payments cannot use up", async () => {
      const owner = await newPerson();
      const ids: string[] = [];
      for (let index = 0; index < 3; index++) ids.push((await allowanceOf(owner, { tokens: 11, recipients: 1, native: true })).id);
      const nonce = await world.relayerNonce();
      await signAndRevoke(owner, [ids[0]]);
      await stopAndSendStored(ids[1]);
      assert.equal(await world.relayerNonce(), nonce + 2);
      // A third of the largest within the day would pass the budget: refused before anything is sent, saying when.
      await assert.rejects(signAndRevoke(owner, [ids[2]]), /as much gas for revoking your allowances .* revocations resume/);
      await assert.rejects(stopAndSendStored(ids[2]), /revocations resume/);
      assert.equal(await world.relayerNonce(), nonce + 2, "nothing more sent");
      assert.equal((await allowance(ids[2])).status, "revoking", "still refusing payments here");
      // Another person's revocations are theirs to spend, even once their payments have used up the day's budget (the
      // ledger's row as a day of payments leaves it).
      const other = await newPerson();
      const theirs = await allowanceOf(other, { tokens: 0, recipients: 1, native: true });
      await lib.db.db().relayedTransaction.create({
        data: {
          hash: `0x${"ab".repeat(32)}`,
          chainId: world.chain.chainId,
          relayer: world.relayer,
          userId: other.userId,
          allowanceId: theirs.id,
          purpose: "payment",
          gasLimit: 2_000_000_000,
          gasUsed: 2_000_000_000,
          status: "landed",
        },
      });
      const before = await world.relayerNonce();
      await signAndRevoke(other, [theirs.id]);
      assert.equal(await world.relayerNonce(), before + 1);
    });

    it("limits how often a person asks for revocations, refusing before anything is checked or sent", async () => {
      const { config } = await import("@/lib/config");
      const { points } = config().rateLimits.revocationsPerPerson;
      const owner = await newPerson();
      const { id } = await allowanceOf(owner, { tokens: 0, recipients: 1, native: true });
      const prepared = await lib.revocation.prepareRevocation(owner.userId, [id]);
      const wrong = { nonce: prepared.nonce, signature: `0x${"11".repeat(65)}` as Hex };
      for (let attempt = 0; attempt < points; attempt++)
        await assert.rejects(lib.revocation.revokeAllowances(owner.userId, [id], wrong), /not the wallet's signature/);
      const signature = await lib.operation.signRevocation(owner.person, prepared);
      const nonce = await world.relayerNonce();
      await assert.rejects(lib.revocation.revokeAllowances(owner.userId, [id], { nonce: prepared.nonce, signature }), (error: Error) => {
        assert.equal((error as { code?: string }).code, "rate_limited");
        return true;
      });
      assert.equal(await world.relayerNonce(), nonce);
      assert.equal((await allowance(id)).status, "active", "nothing changed");
    });

    it("relays nothing when a client already revoked is revoked again", async () => {
      const { createUser } = await import("./oauth");
      const { randomId } = await import("@/lib/crypto");
      const user = await createUser();
      const client = await lib.db.db().client.create({ data: { id: randomId("c_"), kind: "oauth", name: "Revoked" } });
      const grant = await lib.db.db().grant.create({
        data: { id: randomId("g_"), userId: user.id, clientId: client.id, scope: "mcp", status: "revoked", revokedAt: new Date() },
      });
      const person = await world.newPerson("0");
      const { id } = await signAllowanceFor(
        world.chain,
        person,
        { userId: user.id, credentialId: `cr_${person.address}`, grantId: grant.id },
        { recipients: [world.recipient()] },
      );
      await lib.db.db().allowance.update({ where: { id }, data: { status: "revoking" } });
      const prepared = await lib.revocation.prepareRevocation(user.id, [id]);
      const signature = await lib.operation.signRevocation(person, prepared);
      const nonce = await world.relayerNonce();
      await assert.rejects(
        lib.clients.revokeClientForUser(user.id, client.id, { revocations: [{ allowanceIds: [id], nonce: prepared.nonce, signature }] }),
        /already revoked: revoke its allowances one by one/,
      );
      assert.equal(await world.relayerNonce(), nonce);
    });

    it("costs nothing for a stored revocation dropped from the pool whose nonce another took; sent again till it lands", async () => {
      const owner = await newPerson();
      const { id, hashes } = await allowanceOf(owner, { tokens: 0, recipients: 1, native: true });
      const nonce = await world.relayerNonce();
      const ledger = lib.db.db().relayedTransaction;
      const { sending, dropped } = await world.chain.holdingBlocks(async () => {
        const sending = stopAndSendStored(id).then(
          () => null,
          (error: unknown) => error as Error,
        );
        let row = null;
        for (let attempt = 0; !row; attempt++) {
          assert.ok(attempt < 300, "the revocation reached the node's pool");
          const recorded = await ledger.findFirst({ where: { allowanceId: id, purpose: "revocation" } });
          const pooled = await world.chain.client.getTransactionCount({ address: world.relayer, blockTag: "pending" });
          if (recorded && pooled > nonce) row = recorded;
          else await new Promise((resolve) => setTimeout(resolve, 100));
        }
        // The node drops it, as a busy node's pool does, and the relayer's key spends the nonce elsewhere.
        assert.equal(await world.chain.client.request({ method: "hardhat_dropTransaction" as never, params: [row.hash] as never }), true);
        const relayerWallet = createWalletClient({
          account: privateKeyToAccount(localRelayerKey()),
          chain: chainDefinition(world.chain),
          transport: http(world.chain.rpcUrl),
        });
        await relayerWallet.sendTransaction({
          to: world.relayer,
          value: 0n,
          nonce,
          maxFeePerGas: parseGwei("500"),
          maxPriorityFeePerGas: parseGwei("100"),
        });
        return { sending, dropped: row.hash };
      });
      assert.match(String((await sending)?.message), /Another transaction took the nonce .*never be mined/);
      const row = await ledger.findUniqueOrThrow({ where: { hash: dropped } });
      assert.deepEqual([row.status, row.gasUsed, row.cost], ["dropped", 0, 0n], "it cost nothing");
      assert.equal((await allowance(id)).status, "revoking", "still refusing spends");
      const { gasSpentFor } = await import("@/lib/allowances/relayer-ledger");
      assert.equal((await gasSpentFor(owner.userId, world.chain.chainId, "revocations")).gas, 0n, "nothing counted against the person");
      // Sent again, as the server does until the chain confirms it (resend.ts): it lands.
      await lib.revocation.sendStoredRevocations([id]);
      assert.equal((await allowance(id)).status, "revoked");
      assert.deepEqual(
        await world.disabledOnChain(hashes),
        hashes.map(() => true),
      );
      assert.equal(await world.relayerNonce(), nonce + 2, "the other transaction, then the revocation");
    });
  });
}
