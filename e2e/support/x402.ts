// A world for x402 payments within an allowance, called in-process (lib/x402): a hardhat chain with the Delegation
// Framework and Circle's USDC, the erc7710 facilitator, and agents whose person signed a USDC allowance with their
// own key, as the consent ceremony leaves it.
import assert from "node:assert/strict";
import { encodeFunctionData, erc20Abi, getAddress, parseAbi, type Address, type Hex } from "viem";
import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PrivateKeyAccount } from "viem/accounts";
import {
  agentHolding,
  startAllowanceApp,
  startAllowanceWorld,
  signAllowanceFor,
  type AllowanceApp,
  type AllowanceWorld,
} from "./allowances";
import { deployer, mined } from "./contracts";
import { deployFiatToken } from "@/test-chain/fiat-token";
import { startErc7710Facilitator, type Erc7710Facilitator } from "./x402-facilitator";
import { startPaidResourceAsking, type PaidResource } from "./x402-resource";
import type { AgentContext } from "@/lib/wallet/agent-context";
import type { PaymentRequirements, SettleResponse } from "@x402/core/types";

const mintAbi = parseAbi(["function mint(address to, uint256 amount) returns (bool)"]);

export type X402World = AllowanceWorld & {
  token: Address;
  facilitator: Erc7710Facilitator;
  tokenBalance: (address: Address) => Promise<bigint>;
  /**
   * A person holding 1 USDC who gave a new agent an allowance of `perPeriod` USDC units a day to `payees`, or with
   * `anyPayee` to anyone, each payment at most that many units; above it refused, or with `overLimit: "ask"` asked.
   * With `token`, in that token instead (an ERC-20 the node's first account holds), the person holding `holding` of it.
   */
  agentWithAllowance: (options: AllowanceOptions) => Promise<{
    agent: AgentContext;
    credentialId: string;
    allowanceId: string;
    person: Address;
    /** the person's own key, to sign what they are asked to approve */
    personKey: PrivateKeyAccount;
  }>;
  /**
   * What the facilitator's settlement answers for a payment of `amount` to `payee` that an attacker holding the
   * delegate key signed from the allowance's first delegation, past every check of lib/x402: only the chain decides.
   */
  settleWithStolenKey: (allowanceId: string, payee: Address, amount: bigint) => Promise<SettleResponse>;
  /** A resource of this world's selling a report for 0.01 USDC to `payee`: its URL, and the PAYMENT-REQUIRED of its first answer. */
  report: (payee: Address) => Promise<{ url: string; required: string }>;
};

type AllowanceOptions = {
  payees: Address[];
  perPeriod: bigint;
  transactions?: number;
  anyPayee?: bigint;
  /** with anyPayee: the float of the agent's account (decision 0038) */
  float?: bigint;
  overLimit?: "ask" | "refuse";
  token?: { address: Address; holding: bigint };
  /** a key the agent holds, which the allowance delegates to instead of the server's delegate key (decision 0042) */
  agentDelegate?: Address;
};

/** `rpcUrl`: where the app reaches the chain, when not at the node itself (startAllowanceWorld). */
export async function startX402World(
  database: "sqlite" | "postgres",
  rpcUrl?: Parameters<typeof startAllowanceWorld>[0]["rpcUrl"],
): Promise<X402World> {
  const world = await startAllowanceWorld({ database, rpcUrl });
  const token = (await deployFiatToken(world.chain)).address;
  const facilitator = await startErc7710Facilitator(world.chain, world.framework.DelegationManager);
  const minter = await deployer(world.chain);

  async function agentWithAllowance(options: AllowanceOptions) {
    const person = await world.newPerson("1");
    const asset = options.token?.address ?? token;
    await mined(
      world.chain,
      options.token
        ? await minter.writeContract({
            address: asset,
            abi: erc20Abi,
            functionName: "transfer",
            args: [person.address, options.token.holding],
          })
        : await minter.writeContract({ address: token, abi: mintAbi, functionName: "mint", args: [person.address, 1_000_000n] }),
    );
    const { agent, userId, grantId, credentialId } = await agentHolding(person.address, "allowance", "Paying agent");
    const { id } = await signAllowanceFor(
      world.chain,
      person,
      { userId, credentialId, grantId },
      {
        recipients: options.payees,
        anyPayee: options.anyPayee !== undefined,
        native: undefined,
        tokens: [{ address: asset, perPeriod: options.perPeriod, perPayment: options.anyPayee, float: options.float }],
        transactions: options.transactions ?? 20,
        overLimit: options.overLimit ?? "refuse",
        ...(options.agentDelegate && { delegate: options.agentDelegate }),
      },
    );
    return { agent, credentialId, allowanceId: id, person: person.address, personKey: person };
  }

  async function settleWithStolenKey(allowanceId: string, payee: Address, amount: bigint) {
    const { signPaymentLeaf } = await import("@/lib/x402/leaf");
    const { delegationState, findAllowance } = await import("@/lib/allowances/allowances");
    const allowance = await findAllowance(allowanceId);
    const root = await delegationState(world.chain.chainId, world.framework, allowance.delegations[0]);
    const { payload } = await signPaymentLeaf(world.framework, world.framework.paymentEnforcers!, root, {
      chainId: world.chain.chainId,
      asset: token,
      payee,
      amount,
      redeemers: [facilitator.address],
      expiresAt: Math.floor(Date.now() / 1000) + 300,
    });
    const asked = {
      scheme: "exact",
      network: `eip155:${world.chain.chainId}`,
      asset: token,
      amount: String(amount),
      payTo: payee,
      maxTimeoutSeconds: 300,
      extra: {},
    } as PaymentRequirements;
    return facilitator.settle({ x402Version: 2, accepted: asked, payload }, asked);
  }

  const resources: PaidResource[] = [];
  async function report(payee: Address) {
    const { resource, required } = await startPaidResourceAsking({
      facilitator,
      chainId: world.chain.chainId,
      token,
      payTo: payee,
      amount: 10_000n,
      description: "A paid report",
    });
    resources.push(resource);
    return { url: resource.url, required };
  }

  return {
    ...world,
    token,
    facilitator,
    settleWithStolenKey,
    report,
    stop: async () => {
      for (const resource of resources) await resource.close();
      await world.stop();
    },
    tokenBalance: (address: Address) =>
      world.chain.client.readContract({
        address: token,
        abi: parseAbi(["function balanceOf(address) view returns (uint256)"]),
        functionName: "balanceOf",
        args: [address],
      }),
    agentWithAllowance,
  };
}

/**
 * 20 concurrent payments of 0.01 USDC from an allowance of 0.05 USDC a day, none settled: exactly 5 are signed (their
 * amounts held), 15 refused before anything is signed. As the allowance's first payments (each asks the chain under
 * the allowance's lease); after one payment, when what the chain said then still stands (payments decided in the
 * policy's transaction); and so with the agent's transfer of 0.01 USDC from the same allowance beside them (its turn at
 * the allowance taken with its request, holds read there when it wins the lease): whatever the order,
 * the payments signed and the transfer sent add up to the cap exactly.
 */
export async function assertConcurrentPaymentsWithinTheCap(world: X402World, requirement: (payee: Address) => Promise<string>) {
  const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
  const { payFromAllowance } = await import("@/lib/allowances/agent");
  const { RequestError } = await import("@/lib/wallet/request-lifecycle");
  const { systemClock } = await import("@/lib/clock");
  const { db } = await import("@/lib/db");
  const refusal = (reason: unknown) =>
    reason instanceof X402AllowanceRefusal || (reason instanceof RequestError && reason.code === "allowance_refused");
  for (const [warm, withTransfer] of [
    [false, false],
    [true, false],
    [true, true],
  ]) {
    const payee = world.recipient();
    const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 50_000n, transactions: 100 });
    const header = await requirement(payee);
    if (warm) await payX402(agent, credentialId, header);
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [payee, 10_000n] });
    // the agent's send_transaction: its turn at the allowance, when it wins the lease, read with its request
    const sending = () =>
      payFromAllowance(agent, credentialId, { chainId: world.chain.chainId, to: world.token, value: "0", data: transfer }, systemClock);
    const [transfers, results] = await Promise.all([
      Promise.allSettled(withTransfer ? [sending()] : []),
      Promise.allSettled(Array.from({ length: 20 }, () => payX402(agent, credentialId, header))),
    ]);
    const unexpected = [...transfers, ...results].filter((result) => result.status === "rejected" && !refusal(result.reason));
    assert.deepEqual(
      unexpected.map((result) => String((result as PromiseRejectedResult).reason)),
      [],
    );
    const signed = results.filter((result) => result.status === "fulfilled").length + (warm ? 1 : 0);
    assert.ok(
      transfers.every((result) => result.status === "rejected" || "request_id" in result.value),
      "nothing went to the person",
    );
    const sent = transfers.filter((result) => result.status === "fulfilled").length;
    assert.equal(signed + sent, 5, `${signed} payments signed and ${sent} transfer sent, of 0.01 USDC each, within 0.05 USDC`);
    const holds = await db().x402Payment.findMany({ where: { allowanceId } });
    assert.equal(holds.length, signed, "a leaf is stored for each signed payment, and only for those");
    assert.equal(holds.reduce((sum, hold) => sum + BigInt(hold.amount), 0n) + BigInt(sent) * 10_000n, 50_000n);
    assert.equal(getAddress(holds[0].payee), payee);
  }
}

/** The agent's send_transaction of `amount` of the world's token to `payee`, as its allowance pays it (payFromAllowance). */
async function tokenTransfer(world: X402World, agent: AgentContext, credentialId: string, payee: Address, amount: bigint) {
  const { payFromAllowance } = await import("@/lib/allowances/agent");
  const { systemClock } = await import("@/lib/clock");
  const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [payee, amount] });
  return payFromAllowance(agent, credentialId, { chainId: world.chain.chainId, to: world.token, value: "0", data }, systemClock);
}

/**
 * The agent's transfer (send_transaction, its turn at the allowance read with its request) counts what signed payments
 * hold, and a payment after it counts what the transfer spent on chain: the transfer moves the allowance's version, so
 * what an earlier payment read of the chain no longer stands (on each database).
 */
export async function assertTransferCounted(world: X402World, requirement: (payee: Address) => Promise<string>) {
  const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
  const { RequestError } = await import("@/lib/wallet/request-lifecycle");
  const payee = world.recipient();
  const { agent, credentialId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
  const required = await requirement(payee);
  await payX402(agent, credentialId, required);
  const transferOf = (amount: bigint) => tokenTransfer(world, agent, credentialId, payee, amount);
  // 0.025 USDC a day, of which the signed payment holds 0.01: 0.02 does not fit, nothing is sent
  await assert.rejects(transferOf(20_000n), (error: unknown) => error instanceof RequestError && error.code === "allowance_refused");
  assert.equal(await world.tokenBalance(payee), 0n);
  await transferOf(10_000n);
  assert.equal(await world.tokenBalance(payee), 10_000n);
  // the chain now says 0.015 USDC is left, of which the signed payment holds 0.01
  await assert.rejects(payX402(agent, credentialId, required), (error: unknown) => {
    assert.ok(error instanceof X402AllowanceRefusal);
    assert.equal(error.left?.available, "5000");
    return true;
  });
}

/**
 * The grant's allowances as the process remembers them give way to what changed since, on the very next payment (on
 * each database): an allowance paused by another instance pays neither an x402 payment (refused: the resource takes
 * no payment by one tap) nor a transfer (it goes to the person), and a newer allowance given to the grant pays both in
 * place of the one remembered.
 */
export async function assertRememberedAllowancesFollowChanges(world: X402World, requirement: (payee: Address) => Promise<string>) {
  const { payX402 } = await import("@/lib/x402/pay");
  const { db } = await import("@/lib/db");
  const payee = world.recipient();
  const first = await world.agentWithAllowance({ payees: [payee], perPeriod: 100_000n });
  const { agent, credentialId } = first;
  const required = await requirement(payee);
  const transfer = () => tokenTransfer(world, agent, credentialId, payee, 1_000n);
  /** Which allowance paid the transfer, or the person's pending request it became. */
  const transferredFrom = async () => {
    const paid = await transfer();
    if ("toPerson" in paid) return "the person";
    const spend = await db().allowanceSpend.findFirstOrThrow({ where: { txHash: paid.tx_hash! } });
    return spend.allowanceId;
  };
  /** Which allowance paid the x402 payment, or the refusal (the resource takes nothing the person could pay by one tap). */
  const paidFrom = async () => {
    const paid = await payX402(agent, credentialId, required).catch((error: unknown) => (error as { code: string }).code);
    return typeof paid === "string" ? paid : "allowance_id" in paid ? paid.allowance_id : "the person";
  };
  assert.equal(await paidFrom(), first.allowanceId);
  assert.equal(await transferredFrom(), first.allowanceId);
  // paused by another instance (a reverted relay there), after this process read it
  await db().allowance.update({ where: { id: first.allowanceId }, data: { status: "suspended", attention: "relay_reverted" } });
  assert.equal(await paidFrom(), "payment_not_payable");
  assert.equal(await transferredFrom(), "the person");
  await db().allowance.update({ where: { id: first.allowanceId }, data: { status: "active", attention: null } });
  assert.equal(await paidFrom(), first.allowanceId);
  // a second allowance for the same grant and wallet, given on another instance: the newest pays
  const { id: second } = await signAllowanceFor(
    world.chain,
    first.personKey,
    { userId: agent.userId, credentialId, grantId: agent.grantId },
    { recipients: [payee], native: undefined, tokens: [{ address: world.token, perPeriod: 100_000n }], transactions: 20 },
  );
  assert.equal(await paidFrom(), second);
  assert.equal(await transferredFrom(), second);
}

/**
 * A policy without rolling caps is judged by the text the process last read, before the payment's transaction, which
 * requires that text unchanged: the person's new policy applies to the very next payment (on each database), and its
 * refusal is audited once.
 */
export async function assertChangedPolicyApplies(world: X402World, requirement: (payee: Address) => Promise<string>) {
  const { payX402 } = await import("@/lib/x402/pay");
  const { PolicyViolation } = await import("@/lib/wallet/policy");
  const { db } = await import("@/lib/db");
  const payee = world.recipient();
  const { agent, credentialId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 100_000n });
  const capped = (most: string) =>
    db().grantCredential.update({
      where: { grantId_credentialId: { grantId: agent.grantId, credentialId } },
      data: { policy: JSON.stringify({ tokens: [{ chain_id: world.chain.chainId, token: world.token, per_transaction: most }] }) },
    });
  const required = await requirement(payee);
  await capped("20000");
  // twice: the second is judged by the text the first read
  await payX402(agent, credentialId, required);
  await payX402(agent, credentialId, required);
  await capped("5000");
  await assert.rejects(payX402(agent, credentialId, required), (error: unknown) => {
    assert.ok(error instanceof PolicyViolation, String(error));
    assert.equal(error.rule, "tokens.per_transaction");
    return true;
  });
  assert.equal(await db().x402Payment.count({ where: { payee } }), 2, "nothing was held for the refused payment");
  const refusals = await db().auditEvent.count({ where: { type: "policy.refused", clientId: agent.clientId } });
  assert.equal(refusals, 1, "the refusal is audited once, though the payment chose from the allowances the process remembered");
}

/**
 * What an allowance's holds sum to, read as a payment reads them (the database sums the live ones): exactly the sum of
 * their amounts per delegation, with amounts of every size (past SQLite's 64-bit integers too), and a hold past its
 * expiry left to the chain to judge, not counted as live.
 */
export async function assertHoldsSummedExactly(world: X402World) {
  const { heldPayments } = await import("@/lib/allowances/holds");
  const { db } = await import("@/lib/db");
  const { randomId } = await import("@/lib/crypto");
  const { allowanceId } = await world.agentWithAllowance({ payees: [world.recipient()], perPeriod: 10_000n });
  const now = new Date();
  const hold = (delegationHash: string, amount: bigint, expiresAt = new Date(now.getTime() + 120_000)) =>
    db().x402Payment.create({
      data: {
        id: randomId("xp_"),
        allowanceId,
        delegationHash,
        leafHash: randomId("leaf_"),
        token: world.token,
        payee: world.recipient(),
        amount: amount.toString(),
        resource: "https://api.example.test/report",
        status: "held",
        expiresAt,
      },
    });
  const sums = async () => {
    const { totals, rows } = await heldPayments(allowanceId, now);
    return { totals: Object.fromEntries([...totals].map(([hash, held]) => [hash, [held.amount, held.payments]])), rows: rows.length };
  };
  // small amounts, summed by the database
  await hold("0xsmall", 10_000n);
  await hold("0xsmall", 2_500n);
  await hold("0xsmall", 7n, new Date(now.getTime() - 3_600_000)); // long expired: a row for the chain to judge
  assert.deepEqual(await sums(), { totals: { "0xsmall": [12_500n, 2] }, rows: 1 });
  // 18 digits each, a sum past 2^63
  const big = 900_000_000_000_000_000n;
  for (let index = 0; index < 11; index++) await hold("0xbig", big);
  assert.deepEqual((await sums()).totals["0xbig"], [11n * big, 11]);
  // past 18 digits
  await hold("0xhuge", 10n ** 30n + 1n);
  await hold("0xhuge", 5n);
  const { totals, rows } = await sums();
  assert.deepEqual(totals, { "0xsmall": [12_500n, 2], "0xbig": [11n * big, 11], "0xhuge": [10n ** 30n + 6n, 2] });
  assert.equal(rows, 1);
}

/** A V2 PAYMENT-REQUIRED header value offering one `exact` payment, as a resource would ask. */
export function requirementHeader(offer: {
  chainId: number;
  asset: Address;
  amount: string;
  payTo: Address;
  extra: Record<string, unknown>;
}) {
  const { chainId, extra, ...asked } = offer;
  const required = {
    x402Version: 2,
    resource: { url: "https://api.example.test/report", description: "A report" },
    accepts: [{ scheme: "exact", network: `eip155:${chainId}`, ...asked, maxTimeoutSeconds: 120, extra }],
  };
  return Buffer.from(JSON.stringify(required)).toString("base64");
}

/**
 * Requirements no payment can follow, refused with the requirement's own error and nothing written or held, whichever
 * way the agent would pay: by one tap (an `approve` credential, eip3009) or within an allowance (erc7710, and the
 * eip3009 the allowance sends to the person): an asset that is an address with no code, or a contract that is no
 * ERC-20 (the DelegationManager), and an amount of 2^256.
 */
export async function assertBadRequirementsRefused(world: X402World) {
  const { payX402 } = await import("@/lib/x402/pay");
  const { X402RequirementError } = await import("@/lib/x402/requirement");
  const { db } = await import("@/lib/db");
  const payee = world.recipient();
  const withAllowance = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
  const approving = await agentHolding((await world.newPerson("1")).address, "approve", "Approving agent");
  const asking = (asset: Address, amount: string, transfer: "erc7710" | "eip3009") =>
    requirementHeader({
      chainId: world.chain.chainId,
      asset,
      amount,
      payTo: payee,
      extra:
        transfer === "erc7710"
          ? { assetTransferMethod: "erc7710", facilitatorAddresses: [world.facilitator.address] }
          : { name: "USD Coin", version: "2" },
    });
  const noCode = world.recipient();
  const notAToken = world.framework.DelegationManager;
  const cases = [
    {
      asset: noCode,
      amount: "10000",
      words: new RegExp(`asks to be paid in ${noCode} on chain ${world.chain.chainId}, which is no token`),
    },
    { asset: notAToken, amount: "10000", words: new RegExp(`asks to be paid in ${notAToken} on chain \\d+, which is no token`) },
    { asset: world.token, amount: (2n ** 256n).toString(), words: /accepts\.0\.amount must be less than 2\^256/ },
  ];
  for (const { agent, credentialId } of [withAllowance, approving])
    for (const { asset, amount, words } of cases)
      for (const transfer of ["erc7710", "eip3009"] as const)
        await assert.rejects(payX402(agent, credentialId, asking(asset, amount, transfer)), (error: unknown) => {
          assert.ok(error instanceof X402RequirementError, String(error));
          assert.equal(error.code, "invalid_payment_required");
          assert.match(error.message, words);
          return true;
        });
  for (const { agent } of [withAllowance, approving])
    assert.equal(await db().agentRequest.count({ where: { grantId: agent.grantId } }), 0, "no request was written");
  assert.equal(await db().x402Payment.count({ where: { allowanceId: withAllowance.allowanceId } }), 0, "nothing was held");
  // beside an offer it can pay, an offer in no token is passed over
  const both = JSON.parse(Buffer.from(asking(noCode, "1", "erc7710"), "base64").toString("utf8"));
  both.accepts.push({ ...both.accepts[0], asset: world.token, amount: "10000" });
  const paid = await payX402(withAllowance.agent, withAllowance.credentialId, both);
  assert.equal(paid.paid.token, world.token);
}

/**
 * On 2-second blocks, pay_x402 within an allowance end to end: twice the agent pays a report of 0.01 USDC and the
 * resource answers once the facilitator's redemption, waiting in the mempool, landed a block later; the next payment
 * finds the earlier settled, its hold released and counted by the chain alone, so that of 0.025 USDC a day a third is
 * refused with 0.005 USDC left (on each database).
 */
export async function assertPaidOnTwoSecondBlocks(world: X402World) {
  const { payX402, X402AllowanceRefusal } = await import("@/lib/x402/pay");
  const { db } = await import("@/lib/db");
  const payee = world.recipient();
  const { agent, credentialId, allowanceId } = await world.agentWithAllowance({ payees: [payee], perPeriod: 25_000n });
  const { url, required } = await world.report(payee);
  await world.chain.miningEvery(2000, async () => {
    for (const round of [1n, 2n]) {
      const paid = await payX402(agent, credentialId, required);
      const signedAt = await world.chain.client.getBlockNumber();
      const response = await fetch(url, { headers: { [paid.header!]: paid.value! } });
      assert.equal(response.status, 200, world.facilitator.lastRefusal() ?? undefined);
      const settled = decodePaymentResponseHeader(response.headers.get("payment-response")!);
      const receipt = await world.chain.client.getTransactionReceipt({ hash: settled.transaction as Hex });
      assert.equal(receipt.status, "success");
      assert.ok(receipt.blockNumber > signedAt, "redeemed in a block after the payment was signed");
      assert.equal(await world.tokenBalance(payee), 10_000n * round);
    }
    await assert.rejects(payX402(agent, credentialId, required), (error: unknown) => {
      assert.ok(error instanceof X402AllowanceRefusal, String(error));
      assert.equal(error.left?.available, "5000");
      return true;
    });
  });
  assert.deepEqual(
    (await db().x402Payment.findMany({ where: { allowanceId } })).map((row) => row.status),
    ["settled", "settled"],
  );
}

/**
 * The started app on a chain with Circle's USDC and the erc7710 facilitator (the world of the suites that pay x402 over
 * MCP); `resources` and `clients` are closed with it.
 */
export async function startX402App(database: "sqlite" | "postgres" = "sqlite") {
  const world: AllowanceApp = await startAllowanceApp({ database });
  const token = (await deployFiatToken(world.chain)).address;
  const facilitator = await startErc7710Facilitator(world.chain, world.environment.DelegationManager);
  const resources: PaidResource[] = [];
  const clients: { close: () => Promise<void> }[] = [];
  const stop = async () => {
    for (const client of clients) await client.close();
    for (const resource of resources) await resource.close();
    await world.stop();
  };
  return { ...world, token, facilitator, resources, clients, stop };
}
