// Allowances on a real hardhat chain with MetaMask's Delegation Framework deployed: the person signs with their own
// key (EIP-7702 authorization and EIP-712 delegations), the server spends within the caveats through its relayer,
// and the chain — not the server — holds it to the cap. SQLite here; the concurrency case also runs on PostgreSQL
// (e2e/postgres/allowances.test.ts).
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { concat, encodeFunctionData, erc20Abi, parseEther, parseUnits, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  agentHolding,
  assertConcurrentAgentPaymentsNearTheCap,
  assertAgentsOfSeveralPeoplePayTogether,
  assertConcurrentSpendsNearTheCap,
  spendRefusal,
  startAllowanceWorld,
  type AllowanceWorld,
} from "../support/allowances";
import { deployErc20 } from "../support/contracts";
import { recordOutbound, type Outbound } from "../support/outbound";

describe("allowances on the local chain", { timeout: 300_000 }, () => {
  let world: AllowanceWorld;
  let outbound: Outbound;
  let lib: {
    spend: typeof import("@/lib/allowances/spend");
    revocation: typeof import("@/lib/allowances/revocation");
    db: typeof import("@/lib/db");
  };

  before(async () => {
    outbound = recordOutbound();
    world = await startAllowanceWorld({ database: "sqlite" });
    lib = {
      spend: await import("@/lib/allowances/spend"),
      revocation: await import("@/lib/allowances/revocation"),
      db: await import("@/lib/db"),
    };
  });
  after(async () => {
    outbound?.stop();
    await world?.stop();
  });

  describe("0.01 ETH and 10 TKN a day, one recipient, 3 transfers", () => {
    let person: ReturnType<typeof privateKeyToAccount>;
    let shop: Address;
    let token: Address;
    let allowanceId: string;

    before(async () => {
      person = await world.newPerson("1");
      shop = world.recipient();
      token = await deployErc20(world.chain, { name: "Test token", symbol: "TKN", supply: parseUnits("1000", 18), holder: person.address });
      ({ id: allowanceId } = await world.allow(person, {
        recipients: [shop],
        tokens: [{ address: token, perPeriod: parseUnits("10", 18) }],
      }));
    });

    it("gives the person's address the DeleGator's code through the relayer, and stores the allowance", async () => {
      const code = await world.chain.client.getCode({ address: person.address });
      assert.equal(code?.toLowerCase(), `0xef0100${world.framework.implementations.EIP7702StatelessDeleGatorImpl.slice(2).toLowerCase()}`);
      const stored = await lib.db.db().allowance.findUniqueOrThrow({ where: { id: allowanceId }, include: { delegations: true } });
      assert.equal(stored.delegations.length, 2);
      assert.equal(stored.status, "active");
    });

    it("lands two spends within the cap with no one signing", async () => {
      const first = await lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.004") });
      const second = await lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.004") });
      for (const { txHash } of [first, second]) {
        assert.equal((await world.chain.client.getTransactionReceipt({ hash: txHash })).status, "success");
      }
      assert.equal(await world.balance(shop), parseEther("0.008"));
      const spends = await lib.db.db().allowanceSpend.findMany({ where: { allowanceId } });
      assert.deepEqual(
        spends.map((spend) => spend.status),
        ["landed", "landed"],
      );
      const audit = await lib.db.db().auditEvent.findMany({ where: { type: "allowance.spent" } });
      assert.deepEqual(audit.map((event) => JSON.parse(event.data).txHash).sort(), [first.txHash, second.txHash].sort());
    });

    it("refuses the third above the cap before anything is sent, saying what is left and what the person chose", async () => {
      const nonce = await world.relayerNonce();
      const error = await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.004") }));
      assert.equal(error.reason, "over_cap");
      assert.equal(error.overLimit, "ask");
      assert.equal(error.left?.available, parseEther("0.002").toString());
      assert.equal(await world.relayerNonce(), nonce, "nothing was sent");
    });

    it("allows it again once the chain's clock is in the next period", async () => {
      await world.increaseTime(86_400);
      const third = await lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.004") });
      assert.equal((await world.chain.client.getTransactionReceipt({ hash: third.txHash })).status, "success");
      assert.equal(await world.balance(shop), parseEther("0.012"));
    });

    it("stops at the number of transfers the person allowed", async () => {
      const nonce = await world.relayerNonce();
      const error = await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: shop, value: parseEther("0.001") }));
      assert.equal(error.reason, "no_transfers_left");
      assert.equal(await world.relayerNonce(), nonce);
    });

    it("pays the token within its own cap, and refuses above it", async () => {
      const transfer = (amount: string) =>
        encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [shop, parseUnits(amount, 18)] });
      await lib.spend.spendFromAllowance(allowanceId, { to: token, value: 0n, data: transfer("6") });
      const held = await world.chain.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [shop] });
      assert.equal(held, parseUnits("6", 18));
      const nonce = await world.relayerNonce();
      assert.equal(
        (await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: token, value: 0n, data: transfer("6") }))).reason,
        "over_cap",
      );
      assert.equal(await world.relayerNonce(), nonce);
    });

    it("refuses a recipient off the list before anything is sent", async () => {
      const nonce = await world.relayerNonce();
      const stranger = world.recipient();
      const error = await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: stranger, value: parseEther("0.001") }));
      assert.equal(error.reason, "recipient_not_allowed");
      const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [stranger, 1n] });
      assert.equal(
        (await spendRefusal(lib.spend.spendFromAllowance(allowanceId, { to: token, value: 0n, data }))).reason,
        "recipient_not_allowed",
      );
      assert.equal(await world.relayerNonce(), nonce);
      assert.equal(await world.balance(stranger), 0n);
    });

    it("shows each limit in words, what is left this period and when it resets, and every spend with its transaction", async () => {
      const { allowanceViews } = await import("@/lib/allowances/view");
      const [view] = await allowanceViews({ credentialId: `cr_${person.address}` });
      assert.equal(view.id, allowanceId);
      assert.equal(view.status, "active");
      const [coin, tkn] = [view.limits.find((limit) => !limit.token)!, view.limits.find((limit) => limit.token === token)!];
      assert.match(
        coin.words,
        new RegExp(`^Up to 0.01 ETH per day, the day starting at \\d\\d:\\d\\d UTC, to ${shop}; at most 3 payments in all; until `),
      );
      assert.deepEqual([coin.left, coin.transfersLeft], ["0.006", 0]);
      assert.deepEqual([tkn.symbol, tkn.perPeriod, tkn.left, tkn.transfersLeft], ["TKN", "10", "4", 2]);
      const block = await world.chain.client.getBlock();
      assert.ok(Date.parse(coin.resetsAt!) > Number(block.timestamp) * 1000, "the period resets after the chain's now");
      assert.ok(Date.parse(coin.resetsAt!) <= (Number(block.timestamp) + 86_400) * 1000);
      assert.deepEqual(
        view.spends.map((spend) => [spend.amount, spend.status]),
        [
          ["0.004 ETH", "landed"],
          ["0.004 ETH", "landed"],
          ["0.004 ETH", "landed"],
          ["6 TKN", "landed"],
        ],
      );
      assert.ok(view.spends.every((spend) => /^0x[0-9a-f]{64}$/.test(spend.txHash ?? "")));
    });
  });
  it("lands exactly as many of 50 concurrent spends as fit under the cap, none reverting (SQLite)", async () => {
    await assertConcurrentSpendsNearTheCap(world);
  });

  it("lands exactly as many of 50 concurrent agent payments as fit, their leases taken with their requests (SQLite)", async () => {
    await assertConcurrentAgentPaymentsNearTheCap(world);
  });

  it("pays the agents of several people at once, each payment taking the relayer's turn when it is free (SQLite)", async () => {
    await assertAgentsOfSeveralPeoplePayTogether(world);
  });

  it("settles a spend an earlier process sent but never saw mined, and counts one still in the pool against what is left", async () => {
    const person = await world.newPerson("1");
    const shop = world.recipient();
    const { id, hashes } = await world.allow(person, { recipients: [shop] });
    const landed = await lib.spend.spendFromAllowance(id, { to: shop, value: parseEther("0.001") });
    const row = (txHash: string, amount = "1") => ({
      id: `sp_${txHash.slice(2, 12)}`,
      allowanceId: id,
      delegationHash: hashes[0],
      recipient: shop,
      amount,
      status: "sent",
      txHash,
    });
    // As a crashed holder leaves them: one that landed, one the node never heard of.
    await lib.db.db().allowanceSpend.update({ where: { id: landed.spendId }, data: { status: "sent" } });
    await lib.db.db().allowanceSpend.create({ data: row(`0x${"ab".repeat(32)}`) });
    // And one still waiting in the node's pool, of 0.0085 of the 0.009 ETH the chain says is left: the next spend must
    // not be checked against a chain that omits it.
    await world.chain.client.request({ method: "evm_setAutomine" as never, params: [false] as never });
    const [account] = (await world.chain.client.request({ method: "eth_accounts" as never })) as Address[];
    const pending = await world.chain.client.request({
      method: "eth_sendTransaction",
      params: [{ from: account, to: shop, value: "0x1" }],
    } as never);
    await lib.db.db().allowanceSpend.create({ data: row(pending as string, parseEther("0.0085").toString()) });
    try {
      await assert.rejects(lib.spend.spendFromAllowance(id, { to: shop, value: parseEther("0.001") }), /above what is left/);
    } finally {
      await world.chain.client.request({ method: "evm_setAutomine" as never, params: [true] as never });
      await world.chain.client.request({ method: "evm_mine" as never, params: [] as never });
    }
    await lib.spend.spendFromAllowance(id, { to: shop, value: parseEther("0.001") });
    const statuses = await lib.db.db().allowanceSpend.findMany({ where: { allowanceId: id }, orderBy: { createdAt: "asc" } });
    assert.deepEqual(Object.fromEntries(statuses.map((spend) => [spend.txHash, spend.status])), {
      [landed.txHash]: "landed",
      [`0x${"ab".repeat(32)}`]: "failed",
      [pending as string]: "landed",
      [statuses.at(-1)!.txHash!]: "landed",
    });
  });

  it("a compromised server: the delegate key used directly against the DelegationManager cannot exceed the cap", async () => {
    const person = await world.newPerson("1");
    const shop = world.recipient();
    const { id } = await world.allow(person, { recipients: [shop] });
    const stored = await lib.db.db().allowanceDelegation.findFirstOrThrow({ where: { allowanceId: id } });
    const { parseStoredDelegation } = await import("@/lib/allowances/allowances");
    const { delegateAccount } = await import("@/lib/allowances/delegate-key");
    // The attacker has the delegate key and gas of its own, and skips every check the server makes.
    const attacker = await delegateAccount();
    await world.chain.fund(attacker.address, "1");
    const execution = { target: shop, value: parseEther("0.02"), callData: "0x" as const };
    const data = lib.spend.redeemCall([parseStoredDelegation(stored.signed)], execution);
    /** The chain's verdict on the call from the attacker: null when it would go through, else the enforcer's reason. */
    const simulate = (_chainId: number, call: { from: Address; to: Address; data: `0x${string}` }) =>
      world.chain.client.call({ account: call.from, to: call.to, data: call.data }).then(
        () => null,
        (error: Error) => error.message,
      );
    assert.match(
      String(await simulate(world.chain.chainId, { from: attacker.address, to: world.framework.DelegationManager, data })),
      /NativeTokenPeriodTransferEnforcer:transfer-amount-exceeded/,
    );
    const signed = await attacker.signTransaction({
      chainId: world.chain.chainId,
      type: "eip1559",
      to: world.framework.DelegationManager,
      data,
      gas: 500_000n,
      nonce: await world.chain.client.getTransactionCount({ address: attacker.address }),
      maxFeePerGas: parseUnits("10", 9),
      maxPriorityFeePerGas: 1n,
    });
    await world.chain.client.request({ method: "eth_sendRawTransaction", params: [signed] }).catch(() => "hardhat reports the revert");
    assert.equal(await world.balance(shop), 0n, "not one wei moved");
    // Within the cap the same key can pay — that is what the person allowed, no more.
    const within = lib.spend.redeemCall([parseStoredDelegation(stored.signed)], { ...execution, value: parseEther("0.01") });
    assert.equal(
      await simulate(world.chain.chainId, { from: attacker.address, to: world.framework.DelegationManager, data: within }),
      null,
    );
  });

  it("revokes for a person holding 0 ETH, refusing spends from the moment it is asked", async () => {
    const person = await world.newPerson("0");
    const shop = world.recipient();
    const { id, hashes } = await world.allow(person, { recipients: [shop] });
    // A second allowance of the same wallet (another client's, say): one signature revokes both.
    const other = await world.allow(person, { recipients: [world.recipient()] });
    hashes.push(...other.hashes);
    const prepared = await lib.revocation.prepareRevocation("u_test", [id, other.id]);
    // A revocation the wallet did not sign changes nothing: refused before the allowances stop.
    const { operationTypedData, revocationOperation, signRevocation } = await import("@/lib/allowances/revocation-operation");
    const { delegationFromJson } = await import("@/lib/allowances/caveats");
    const operation = revocationOperation(
      prepared.framework,
      prepared.delegator,
      prepared.delegations.map(delegationFromJson),
      BigInt(prepared.nonce),
    );
    const wrong = await privateKeyToAccount(generatePrivateKey()).signTypedData(
      operationTypedData(prepared.framework, prepared.chainId, operation),
    );
    await assert.rejects(
      lib.revocation.revokeAllowances("u_test", [id, other.id], { nonce: prepared.nonce, signature: wrong }),
      /not the wallet's signature/,
    );
    assert.deepEqual(
      (await lib.db.db().allowance.findMany({ where: { id: { in: [id, other.id] } } })).map((allowance) => allowance.status),
      ["active", "active"],
    );
    await assert.rejects(signRevocation(privateKeyToAccount(generatePrivateKey()), prepared), /not this wallet's/);
    const signature = await signRevocation(person, prepared);
    const { txHash } = await lib.revocation.revokeAllowances("u_test", [id, other.id], { nonce: prepared.nonce, signature });
    assert.ok(txHash, "a transaction disabled them");
    assert.equal((await world.chain.client.getTransactionReceipt({ hash: txHash })).status, "success");
    const { DelegationManager } = await import("@metamask/delegation-abis");
    for (const hash of hashes) {
      assert.equal(
        await world.chain.client.readContract({
          address: world.framework.DelegationManager,
          abi: DelegationManager,
          functionName: "disabledDelegations",
          args: [hash],
        }),
        true,
      );
    }
    assert.equal(await world.balance(person.address), 0n, "the person paid nothing");
    for (const stored of await lib.db.db().allowance.findMany({ where: { id: { in: [id, other.id] } } })) {
      assert.equal(stored.status, "revoked");
      assert.equal(stored.revocationTx, txHash);
    }
    const audit = await lib.db.db().auditEvent.findMany({ where: { type: "allowance.revoked" } });
    assert.deepEqual(audit.map((event) => JSON.parse(event.data).allowanceId).sort(), [id, other.id].sort());
  });

  it("a transaction the chain would refuse is refused before the person is asked, with the chain's reason in words", async () => {
    const { createRequest } = await import("@/lib/wallet/requests");
    const { execute, handleOpsCall } = await import("@/lib/allowances/deleGator.fixture");
    const { db } = lib.db;
    const person = await world.newPerson("1");
    const { agent, grantId, credentialId } = await agentHolding(person.address, "approve", "Careless agent");
    const ask = (to: Address, data: `0x${string}`) =>
      createRequest(agent, { kind: "send_transaction", credential_id: credentialId, chain_id: world.chain.chainId, to, value: "0", data });
    const taker = world.recipient();
    // A user operation for the wallet (its address runs the DeleGator) whose signature is not the wallet's: the
    // EntryPoint's FailedOpWithRevert, decoded (the DeleGator's validation reverted).
    const deleGator = concat(["0xef0100", world.framework.implementations.EIP7702StatelessDeleGatorImpl]);
    await world.chain.client.request({ method: "hardhat_setCode" as never, params: [person.address, deleGator] as never });
    const operation = handleOpsCall(person.address, execute([{ target: taker, value: parseEther("0.01"), callData: "0x" }]), taker);
    await assert.rejects(ask(world.framework.EntryPoint, operation), (error: unknown) => {
      assert.equal((error as { code?: string }).code, "would_revert");
      assert.match(
        (error as Error).message,
        /^The chain would refuse this transaction \(FailedOpWithRevert: AA23 reverted\); nothing was sent\.$/,
      );
      return true;
    });
    // A token's own reason.
    const token = await deployErc20(world.chain, { name: "Test", symbol: "TST", supply: 10n, holder: taker });
    const overdrawn = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [taker, 5n] });
    await assert.rejects(
      ask(token, overdrawn),
      /^WouldRevertError: The chain would refuse this transaction \(ERC20: transfer amount exceeds balance\)/,
    );
    assert.equal(await db().agentRequest.count({ where: { grantId } }), 0, "nothing waits for the person");
  });

  it("contacted no host but the configured chain and database", () => {
    assert.deepEqual(outbound.hosts(), ["127.0.0.1"]);
  });
});
