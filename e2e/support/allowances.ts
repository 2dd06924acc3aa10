// A world for allowance tests that call lib/allowances in-process: a hardhat chain with the Delegation Framework,
// a fresh database (SQLite file or PostgreSQL), and people whose keys sign in the test as the browser will: the
// EIP-7702 authorization and each EIP-712 delegation, with the person's own key. And the started app on such a chain,
// for the suites that go through HTTP, MCP and Chromium (`startAllowanceApp`).
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { getAddress, parseEther, toHex, type Address, type Hex } from "viem";
import { DelegationManager } from "@metamask/delegation-abis";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { Browser } from "playwright-core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolInput, ToolName, ToolOutput } from "@/contract";
import { createPostgresDatabase, startApp, type PostgresDatabase, type RunningApp } from "./app";
import { launchBrowser } from "./browser";
import { connectWithBearer } from "./mcp-client";
import { signedLeaf } from "./agent-leaf";
import { obtainTokens } from "./oauth";
import { importWallet, newPerson } from "./consent";
import { chainsSetting, stallingRpc, startChain, type LocalChain, type StallingRpc } from "./chain";
import { deployFramework, frameworksSetting, type FrameworkEnvironment } from "@/test-chain/delegation-framework";
import { migrateDatabase } from "@/lib/db/migrate";
import type { AllowanceSpec } from "@/lib/allowances/caveats";
import { HARDHAT_MNEMONIC, localRelayerKey } from "@/lib/allowances/settings";
import type { AgentContext } from "@/lib/wallet/agent-context";

/** Hardhat's accounts that relay beside account 19 when a chain has several relayers (18 is the revocations'). */
const MORE_RELAYERS = [17, 16, 15, 14, 13, 12, 11];

/**
 * The ALLOWANCE_RELAYERS setting for this chain: hardhat's account 19 (production has no default relayer), or `count`
 * relayers, 19 and then 17, 16 and so on.
 */
export function relayersSetting(chain: { chainId: number }, count = 1): string {
  if (count === 1) return JSON.stringify({ [chain.chainId]: localRelayerKey() });
  const more = MORE_RELAYERS.slice(0, count - 1).map((addressIndex) =>
    toHex(mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex }).getHdKey().privateKey!),
  );
  return JSON.stringify({ [chain.chainId]: [localRelayerKey(), ...more] });
}

export type AllowanceWorld = Awaited<ReturnType<typeof startAllowanceWorld>>;

/** Whether the DelegationManager at `manager` shows each delegation disabled. */
function disabledOn(chain: LocalChain, manager: Address, hashes: Hex[]): Promise<boolean[]> {
  return Promise.all(
    hashes.map((hash) =>
      chain.client.readContract({ address: manager, abi: DelegationManager, functionName: "disabledDelegations", args: [hash] }),
    ),
  );
}

/** Gas the suites' relayers may pay per person a day: the cap tests pay more than an operator's default allows. */
const TEST_GAS_BUDGET = "1000000000";

/**
 * `rpcUrl`: where the app reaches the chain, when not at the node itself (a proxy the test controls); `env`: settings
 * of the test's own (they win).
 */
export async function startAllowanceWorld(options: {
  database: "sqlite" | "postgres";
  rpcUrl?: (chain: LocalChain) => Promise<string>;
  env?: Record<string, string>;
  /** The chain charges an L1 data fee as OP-stack chains do (CHAINS' `l1Fees`). */
  l1Fees?: "op-stack";
}) {
  const chain: LocalChain = await startChain();
  const environment: FrameworkEnvironment = await deployFramework(chain);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-allowances-"));
  const postgres: PostgresDatabase | null = options.database === "postgres" ? await createPostgresDatabase() : null;
  const databaseUrl = postgres?.url ?? `file:${path.join(dataDir, "agent-wallet.db")}`;
  Object.assign(process.env, {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    APP_URL: "http://localhost:3999",
    BASE_URL: "http://localhost:3999",
    CHAINS: chainsSetting({ ...chain, rpcUrl: options.rpcUrl ? await options.rpcUrl(chain) : chain.rpcUrl }, { l1Fees: options.l1Fees }),
    ALLOWANCE_FRAMEWORKS: frameworksSetting(chain, environment),
    ALLOWANCE_RELAYERS: relayersSetting(chain),
    ALLOWANCE_GAS_BUDGET: TEST_GAS_BUDGET,
    // PostgreSQL requires it; on SQLite it is generated into the data folder.
    ...(postgres && { ALLOWANCE_KEY_SECRET: randomBytes(32).toString("base64url") }),
    ...options.env,
  });
  migrateDatabase(databaseUrl);
  // Imported after the environment is set: config() and db() read it once.
  const { delegateAccount } = await import("@/lib/allowances/delegate-key");
  const { allowanceFramework } = await import("@/lib/wallet/chains");
  const { relayerAccount } = await import("@/lib/allowances/settings");
  const framework = allowanceFramework(chain.chainId);
  if (!framework) throw new Error("the deployed framework was not configured");
  const relayer = relayerAccount(chain.chainId)!.address;
  const delegate = (await delegateAccount()).address;

  /** A person with `ether` in their wallet (0: none at all). */
  async function newPerson(ether: string): Promise<PrivateKeyAccount> {
    const person = privateKeyToAccount(generatePrivateKey());
    await chain.fund(person.address, ether);
    return person;
  }

  const allow = (person: PrivateKeyAccount, overrides: Partial<AllowanceSpec> & { recipients: Address[] }) =>
    signAllowanceFor(chain, person, { userId: "u_test", credentialId: `cr_${person.address}` }, overrides);

  return {
    chain,
    framework,
    relayer,
    delegate,
    newPerson,
    allow,
    /** How many transactions the relayer has sent: unchanged means nothing was sent. */
    relayerNonce: () => chain.client.getTransactionCount({ address: relayer }),
    /** Whether the DelegationManager shows each delegation disabled. */
    disabledOnChain: (hashes: Hex[]) => disabledOn(chain, framework.DelegationManager, hashes),
    balance: (address: Address) => chain.client.getBalance({ address }),
    recipient: () => getAddress(privateKeyToAccount(generatePrivateKey()).address),
    increaseTime: async (seconds: number) => {
      await chain.client.request({ method: "evm_increaseTime" as never, params: [seconds] as never });
      await chain.client.request({ method: "evm_mine" as never, params: [] as never });
    },
    stop: async () => {
      const { disconnectDatabase } = await import("@/lib/db");
      await disconnectDatabase();
      await chain.stop();
      await postgres?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type AllowanceApp = {
  chain: LocalChain;
  environment: FrameworkEnvironment;
  app: RunningApp;
  /** the chain's relayer, which pays every allowance transaction */
  relayer: Address;
  /** How many transactions the relayer has sent: unchanged means nothing was sent. */
  relayerNonce: () => Promise<number>;
  /** A fresh address no one holds the key of. */
  recipient: () => Address;
  /** Whether the DelegationManager shows each delegation disabled. */
  disabledOnChain: (hashes: Hex[]) => Promise<boolean[]>;
  /** The endpoint between the app and the chain, when `rpc` was asked for: the test can make the chain unreachable. */
  rpc: StallingRpc | undefined;
  stop: () => Promise<void>;
};

/**
 * `database`: the app's database; `rpc`: the app reaches the chain through a stallingRpc; `env`: settings of the app's
 * own; `tokens`: contracts deployed before the app starts, which CHAINS lists for the chain.
 */
type AllowanceAppOptions = {
  /** the app's database: a SQLite file (the default) or a fresh PostgreSQL database */
  database?: "sqlite" | "postgres";
  explorerUrl?: string;
  rpc?: boolean;
  env?: Record<string, string>;
  tokens?: (chain: LocalChain) => Promise<Address[]>;
};

/**
 * The app started on a fresh hardhat chain with the Delegation Framework deployed and configured (CHAINS,
 * ALLOWANCE_FRAMEWORKS, ALLOWANCE_RELAYERS), and Chromium when `browser` is asked for. Whatever started is stopped if
 * a later step fails.
 */
export async function startAllowanceApp(options: AllowanceAppOptions & { browser: true }): Promise<AllowanceApp & { browser: Browser }>;
export async function startAllowanceApp(options?: AllowanceAppOptions & { browser?: false }): Promise<AllowanceApp>;
export async function startAllowanceApp(options: AllowanceAppOptions & { browser?: boolean } = {}) {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step();
  };
  try {
    const chain = await startChain();
    stops.push(() => chain.stop());
    const environment = await deployFramework(chain);
    const explorer = {
      ...(options.explorerUrl && { explorerUrl: options.explorerUrl }),
      ...(options.tokens && { tokens: await options.tokens(chain) }),
    };
    const rpc = options.rpc ? await stallingRpc(chain) : undefined;
    if (rpc) stops.push(() => rpc.close());
    const app = await startApp({
      database: options.database,
      env: {
        CHAINS: chainsSetting({ ...chain, rpcUrl: rpc?.url ?? chain.rpcUrl }, explorer),
        ALLOWANCE_FRAMEWORKS: frameworksSetting(chain, environment),
        ALLOWANCE_RELAYERS: relayersSetting(chain),
        ALLOWANCE_GAS_BUDGET: TEST_GAS_BUDGET,
        ...options.env,
      },
    });
    stops.push(() => app.stop());
    const browser = options.browser ? await launchBrowser() : undefined;
    if (browser) stops.push(() => browser.close());
    const { relayerAccount } = await import("@/lib/allowances/settings");
    const relayer = relayerAccount(chain.chainId)!.address;
    return {
      chain,
      environment,
      app,
      browser,
      rpc,
      relayer,
      relayerNonce: () => chain.client.getTransactionCount({ address: relayer }),
      recipient: () => getAddress(privateKeyToAccount(generatePrivateKey()).address),
      disabledOnChain: (hashes: Hex[]) => disabledOn(chain, environment.DelegationManager, hashes),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * A person with 1 ETH whose credential a new agent holds in `allowance` mode, signed in through the app's OAuth, with
 * its MCP client (the caller closes it).
 */
export async function agentOverMcp({ chain, app }: { chain: LocalChain; app: RunningApp }) {
  const { db } = await import("@/lib/db");
  const { randomId } = await import("@/lib/crypto");
  const person = privateKeyToAccount(generatePrivateKey());
  await chain.fund(person.address, "1");
  let credentialId = "";
  const flow = await obtainTokens(app, {
    credentials: async (userId) => {
      credentialId = (
        await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address: person.address } })
      ).id;
      return [{ credentialId, mode: "approve" }];
    },
  });
  // Consent does not offer the mode yet (its ceremony is the next step): set as the ceremony will.
  await db().grantCredential.update({
    where: { grantId_credentialId: { grantId: flow.grantId, credentialId } },
    data: { mode: "allowance" },
  });
  const client = await connectWithBearer(app.baseUrl, flow.tokens.access_token);
  return { person, userId: flow.user.id, grantId: flow.grantId, credentialId, client, accessToken: flow.tokens.access_token };
}

/**
 * The person signs an allowance with their own key (the 7702 authorization once, then each delegation, then its
 * revocation), as the browser will, and the server stores it for their credential (and grant). Call once the
 * environment is set.
 */
export async function signAllowanceFor(
  chain: LocalChain,
  person: PrivateKeyAccount,
  owner: { userId: string; credentialId: string; grantId?: string },
  overrides: Partial<AllowanceSpec> & { recipients: Address[] },
) {
  const { createAllowance } = await import("@/lib/allowances/allowances");
  const { input, now } = await signedAllowanceFor(chain, person, owner, overrides);
  return createAllowance(input, now);
}

/**
 * A wallet of a grant the person made in `approve` mode switched to `allowance` with an allowance its key signs: the
 * state consent's ceremony leaves (covered by ceremony.test.ts), reached with the same lib code the page runs.
 */
export async function grantAllowanceFor(
  chain: LocalChain,
  person: PrivateKeyAccount,
  owner: { userId: string; credentialId: string; grantId: string },
  overrides: Partial<AllowanceSpec> & { recipients: Address[] },
) {
  const { db } = await import("@/lib/db");
  await db().grantCredential.update({
    where: { grantId_credentialId: { grantId: owner.grantId, credentialId: owner.credentialId } },
    data: { mode: "allowance" },
  });
  return signAllowanceFor(chain, person, owner, overrides);
}

/**
 * What `signAllowanceFor` stores, signed but not yet sent: for a test that changes it first. With `delegate` (a key the
 * agent holds) the delegations name it, and the allowance is the agent's to sign payments from (delegateKind "agent").
 */
export async function signedAllowanceFor(
  chain: LocalChain,
  person: PrivateKeyAccount,
  owner: { userId: string; credentialId: string; grantId?: string },
  overrides: Partial<AllowanceSpec> & { recipients: Address[] },
) {
  const caveats = await import("@/lib/allowances/caveats");
  const { signAllowance } = await import("@/lib/allowances/signing");
  const { delegateAccount } = await import("@/lib/allowances/delegate-key");
  const { allowanceFramework } = await import("@/lib/wallet/chains");
  const framework = allowanceFramework(chain.chainId);
  if (!framework) throw new Error("the deployed framework was not configured");
  const serverDelegate = (await delegateAccount()).address;
  const block = await chain.client.getBlock();
  const now = Number(block.timestamp);
  const spec: AllowanceSpec = {
    chainId: chain.chainId,
    delegator: person.address,
    delegate: serverDelegate,
    native: parseEther("0.01"),
    tokens: [],
    periodSeconds: caveats.DAY,
    startsAt: now,
    expiresAt: now + 7 * caveats.DAY,
    transactions: 3,
    overLimit: "ask",
    ...overrides,
  };
  const code = await chain.client.getCode({ address: person.address });
  const signed = await signAllowance(person, {
    framework,
    chainId: chain.chainId,
    delegate: spec.delegate,
    delegations: caveats.delegationsFor(spec, framework, now),
    authorizationNonce: code ? null : await chain.client.getTransactionCount({ address: person.address }),
  });
  return {
    input: {
      ...owner,
      chainId: chain.chainId,
      delegator: person.address,
      overLimit: spec.overLimit,
      perPayment: caveats.perPaymentOf(spec),
      ...(spec.delegate !== serverDelegate && { agentDelegate: spec.delegate }),
      ...signed,
    },
    now: new Date(now * 1000),
  };
}

/**
 * 50 concurrent spends of 0.0003 ETH from an allowance of 0.01 ETH a day: 33 fit. Asserts that exactly 33 land, the
 * other 17 are refused before anything is sent, and no transaction the relayer sent reverted.
 */
export async function assertConcurrentSpendsNearTheCap(world: AllowanceWorld): Promise<void> {
  const outcome = await concurrentSpendsNearTheCap(world);
  assert.deepEqual(outcome.others, []);
  assert.equal(outcome.landed, 33);
  assert.equal(outcome.refused, 17);
  assert.equal(outcome.sent, 33, "the relayer sent only what landed");
  assert.equal(outcome.reverted, 0);
  assert.equal(outcome.received, parseEther("0.0099"));
}

async function concurrentSpendsNearTheCap(world: AllowanceWorld) {
  const { spendFromAllowance, AllowanceRefusal } = await import("@/lib/allowances/spend");
  const person = await world.newPerson("1");
  const shop = world.recipient();
  const { id } = await world.allow(person, { recipients: [shop], transactions: 100 });
  const nonceBefore = await world.relayerNonce();
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, () => spendFromAllowance(id, { to: shop, value: parseEther("0.0003") })),
  );
  const landed = results.filter((result) => result.status === "fulfilled");
  const refused = results.filter(
    (result) => result.status === "rejected" && result.reason instanceof AllowanceRefusal && result.reason.reason === "over_cap",
  );
  const hashes = landed.map((result) => (result as PromiseFulfilledResult<{ txHash: Hex }>).value.txHash);
  const receipts = await Promise.all(hashes.map((hash) => world.chain.client.getTransactionReceipt({ hash })));
  return {
    landed: landed.length,
    refused: refused.length,
    others: results
      .filter((result) => result.status === "rejected" && !refused.includes(result))
      .map((result) => String((result as PromiseRejectedResult).reason)),
    reverted: receipts.filter((receipt) => receipt.status !== "success").length,
    sent: (await world.relayerNonce()) - nonceBefore,
    received: await world.balance(shop),
  };
}

/**
 * The agent's way (send_transaction: payFromAllowance, whose policy transaction takes the allowance's lease when it is
 * free): 50 concurrent payments of 0.0003 ETH from an allowance of 0.01 ETH a day land exactly the 33 that fit, each
 * its request completed, none reverting; those refused, and one refused before its turn (a call the allowance does not
 * pay), leave the lease free: nothing waits for a lease no one holds.
 */
export async function assertConcurrentAgentPaymentsNearTheCap(world: AllowanceWorld): Promise<void> {
  const { payFromAllowance } = await import("@/lib/allowances/agent");
  const { RequestError } = await import("@/lib/wallet/request-lifecycle");
  const { systemClock } = await import("@/lib/clock");
  const { db } = await import("@/lib/db");
  const person = await world.newPerson("1");
  const shop = world.recipient();
  const { agent, userId, grantId, credentialId } = await agentHolding(person.address, "allowance", "Paying agent");
  const { id } = await signAllowanceFor(
    world.chain,
    person,
    { userId, credentialId, grantId },
    { recipients: [shop], transactions: 100, overLimit: "refuse" },
  );
  const pay = (data: Hex = "0x") =>
    payFromAllowance(
      agent,
      credentialId,
      { chainId: world.chain.chainId, to: shop, value: parseEther("0.0003").toString(), data },
      systemClock,
    );
  const leaseOf = () => db().lease.findUnique({ where: { key: `allowance:${id}` } });
  const relayerLease = () => db().lease.findUnique({ where: { key: `relayer:${world.chain.chainId}:${world.relayer}` } });
  // a call of the shop's, which no allowance pays: refused before its turn, with the leases its reservation took
  await assert.rejects(pay("0xdeadbeef"), (error: unknown) => error instanceof RequestError && error.code === "allowance_refused");
  assert.equal(await leaseOf(), null, "the refused payment left the lease free");
  assert.equal(await relayerLease(), null, "the refused payment left the relayer's lease free");
  const nonceBefore = await world.relayerNonce();
  const results = await Promise.allSettled(Array.from({ length: 50 }, () => pay()));
  const paid = results.flatMap((result) => (result.status === "fulfilled" && "request_id" in result.value ? [result.value] : []));
  const refused = results.filter(
    (result) => result.status === "rejected" && result.reason instanceof RequestError && result.reason.code === "allowance_refused",
  );
  assert.deepEqual(
    results.filter((result) => !paid.some((view) => result.status === "fulfilled" && result.value === view) && !refused.includes(result)),
    [],
  );
  assert.equal(paid.length, 33);
  assert.ok(paid.every((view) => view.status === "completed" && view.tx_hash));
  assert.equal(refused.length, 17);
  assert.equal((await world.relayerNonce()) - nonceBefore, 33, "the relayer sent only what landed");
  const receipts = await Promise.all(paid.map((view) => world.chain.client.getTransactionReceipt({ hash: view.tx_hash as Hex })));
  assert.ok(receipts.every((receipt) => receipt.status === "success"));
  assert.equal(await world.balance(shop), parseEther("0.0099"));
  assert.equal(await leaseOf(), null, "the last payment's receipt freed the lease");
  assert.equal(await relayerLease(), null, "the last send freed the relayer's lease");
}

/**
 * Agents of three people paying at once, four payments each (payFromAllowance: each payment's transaction takes the
 * relayer's lease with its allowance's when both are free, and the others wait for it): all twelve land, one relayer
 * nonce each, and no lease is left held.
 */
export async function assertAgentsOfSeveralPeoplePayTogether(world: AllowanceWorld): Promise<void> {
  const { payFromAllowance } = await import("@/lib/allowances/agent");
  const { systemClock } = await import("@/lib/clock");
  const { db } = await import("@/lib/db");
  const shop = world.recipient();
  const payers = [];
  for (const name of ["A", "B", "C"]) {
    const person = await world.newPerson("1");
    const { agent, userId, grantId, credentialId } = await agentHolding(person.address, "allowance", `Agent ${name}`);
    await signAllowanceFor(world.chain, person, { userId, credentialId, grantId }, { recipients: [shop], transactions: 100 });
    payers.push({ agent, credentialId });
  }
  const nonceBefore = await world.relayerNonce();
  const balanceBefore = await world.balance(shop);
  const payments = payers.flatMap(({ agent, credentialId }) =>
    Array.from({ length: 4 }, () =>
      payFromAllowance(
        agent,
        credentialId,
        { chainId: world.chain.chainId, to: shop, value: parseEther("0.0002").toString(), data: "0x" },
        systemClock,
      ),
    ),
  );
  const paid = await Promise.all(payments);
  assert.deepEqual(
    paid.map((view) => ("status" in view ? view.status : view)),
    Array.from({ length: 12 }, () => "completed"),
  );
  assert.equal((await world.relayerNonce()) - nonceBefore, 12);
  assert.equal((await world.balance(shop)) - balanceBefore, parseEther("0.0024"));
  assert.deepEqual(await db().lease.findMany(), [], "no lease is left held");
}

/**
 * Two allowances of one person, eight concurrent payments from each, under a gas budget of `budget`: those that would
 * pass it are refused before anything is sent, and the relayer pays no more gas for the person than the budget.
 */
export async function assertConcurrentSpendsWithinTheBudget(world: AllowanceWorld, budget: bigint): Promise<void> {
  const { spendFromAllowance, AllowanceRefusal } = await import("@/lib/allowances/spend");
  const { db } = await import("@/lib/db");
  const person = await world.newPerson("1");
  const shop = world.recipient();
  const owner = { userId: `u_budget_${person.address}`, credentialId: `cr_${person.address}` };
  const ids: string[] = [];
  for (let made = 0; made < 2; made++)
    ids.push((await signAllowanceFor(world.chain, person, owner, { recipients: [shop], transactions: 100 })).id);
  const results = await Promise.allSettled(
    ids.flatMap((id) => Array.from({ length: 8 }, () => spendFromAllowance(id, { to: shop, value: parseEther("0.0001") }))),
  );
  const overBudget = results.filter(
    (result) => result.status === "rejected" && result.reason instanceof AllowanceRefusal && result.reason.reason === "relay_unavailable",
  );
  const others = results.filter((result) => result.status === "rejected" && !overBudget.includes(result));
  assert.deepEqual(
    others.map((result) => String((result as PromiseRejectedResult).reason)),
    [],
  );
  assert.ok(overBudget.length > 0, "the budget ran out");
  const relayed = await db().relayedTransaction.findMany({ where: { userId: owner.userId } });
  const gas = relayed.reduce((sum, row) => sum + BigInt(row.gasUsed ?? row.gasLimit), 0n);
  assert.ok(gas <= budget, `${gas} gas relayed for a budget of ${budget}`);
  assert.equal(relayed.filter((row) => row.status === "reverted").length, 0);
  assert.equal(relayed.filter((row) => row.purpose === "payment").length, results.length - overBudget.length);
}

/** The AllowanceRefusal a spend ends with; fails the test if it paid or failed otherwise. */
export async function spendRefusal(promise: Promise<unknown>) {
  // handled at once: a spend that fails while the module loads is not an unhandled rejection
  const settled = promise.then(
    () => assert.fail("the spend was not refused"),
    (error: unknown) => error,
  );
  const { AllowanceRefusal } = await import("@/lib/allowances/spend");
  const error = await settled;
  assert.ok(error instanceof AllowanceRefusal, String(error));
  return error;
}

/**
 * A person signed up in `browser` who imported `key` as their only wallet, "Shopping" (the page's confirmations
 * accepted), with the ids the allowance suites ask for.
 */
export async function personWithShoppingWallet(browser: Browser, app: RunningApp, email: string, key: Hex) {
  const person = await newPerson(browser, app, email, []);
  await importWallet(person.page, "Shopping", key);
  const { db } = await import("@/lib/db");
  const credential = await db().credential.findFirstOrThrow({ where: { name: "Shopping", user: { email } } });
  person.page.on("dialog", (dialog) => void dialog.accept());
  return { person, credentialId: credential.id, userId: credential.userId };
}

/**
 * An agent's grant of `address` (a wallet named "Main") in `mode`, made in the database as consent leaves it, for
 * suites that call lib/ in-process: the agent's context and the ids its calls name.
 */
export async function agentHolding(address: Address, mode: "approve" | "allowance", clientName: string) {
  const { db } = await import("@/lib/db");
  const { randomId } = await import("@/lib/crypto");
  const userId = randomId("u_");
  const userEmail = `${userId}@example.test`;
  await db().user.create({ data: { id: userId, email: userEmail } });
  const client = await db().client.create({ data: { id: randomId("cl_"), kind: "oauth", name: clientName } });
  const grant = await db().grant.create({ data: { id: randomId("gr_"), userId, clientId: client.id, scope: "mcp" } });
  const credential = await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address } });
  await db().grantCredential.create({ data: { grantId: grant.id, credentialId: credential.id, mode } });
  const agent: AgentContext = {
    userId,
    userEmail,
    clientId: client.id,
    clientName,
    grantId: grant.id,
    via: "access_token",
    credentials: [{ credentialId: credential.id, mode, name: "Main", kind: "evm", address }],
  };
  return { agent, userId, grantId: grant.id, credentialId: credential.id };
}

/**
 * An agent of a person of their own (with 1 ETH), with an allowance to a shop of its own (100 payments, refused over
 * the limit; `spec` for the rest): `pay` sends the shop `payment` of the chain's coin as send_transaction does.
 */
export async function agentPayingShop(world: AllowanceWorld, payment: bigint, spec: Partial<AllowanceSpec> = {}) {
  const { payFromAllowance } = await import("@/lib/allowances/agent");
  const { systemClock } = await import("@/lib/clock");
  const person = await world.newPerson("1");
  const shop = world.recipient();
  const { agent, userId, grantId, credentialId } = await agentHolding(person.address, "allowance", "Paying agent");
  const allowance = await signAllowanceFor(
    world.chain,
    person,
    { userId, credentialId, grantId },
    { recipients: [shop], transactions: 100, overLimit: "refuse", ...spec },
  );
  const pay = () =>
    payFromAllowance(agent, credentialId, { chainId: world.chain.chainId, to: shop, value: payment.toString(), data: "0x" }, systemClock);
  return { person, shop, pay, agent, userId, grantId, credentialId, allowance };
}

/**
 * The MCP tools of a bearer (an API key, say), called in this process as /mcp answers them (lib/mcp/handler.ts), for
 * suites with no app of their own: a tool's result, or its error thrown in the tool's words.
 */
function toolsInProcess(bearer: string) {
  let id = 0;
  return async <N extends ToolName>(name: N, args: ToolInput<N>): Promise<ToolOutput<N>> => {
    const { handleMcpRequest } = await import("@/lib/mcp/handler");
    const { config } = await import("@/lib/config");
    const url = new URL("/mcp", config().baseUrl);
    const response = await handleMcpRequest(
      new Request(url, {
        method: "POST",
        headers: {
          Host: url.host,
          Authorization: `Bearer ${bearer}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-06-18",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name, arguments: args } }),
      }),
    );
    const body = (await response.json()) as { result?: CallToolResult; error?: { message: string } };
    if (!body.result || body.result.isError) throw new Error(`${name}: ${body.error?.message ?? JSON.stringify(body.result?.content)}`);
    return body.result.structuredContent as ToolOutput<N>;
  };
}

/**
 * agentPayingShop's agent holding the allowance's key itself, with nothing for gas, through a personal API key: `pay`
 * prepares the payment's one-time delegation (prepare_allowance_payment), signs it with that key, and has the relayer
 * send it (send_allowance_payment, with an idempotency key of its own); `again` sends that call again, as an agent
 * whose answer was lost does.
 */
export async function agentSigningForShop(world: AllowanceWorld, payment: bigint, spec: Partial<AllowanceSpec> = {}) {
  const person = await world.newPerson("1");
  const shop = world.recipient();
  const agentKey = privateKeyToAccount(generatePrivateKey());
  const { apiKey, ...owner } = await apiKeyHolding(person.address, "Signing agent");
  const allowance = await signAllowanceFor(world.chain, person, owner, {
    recipients: [shop],
    transactions: 100,
    overLimit: "refuse",
    delegate: agentKey.address,
    ...spec,
  });
  const tool = toolsInProcess(apiKey);
  const named = { credential_id: owner.credentialId, chain_id: world.chain.chainId };
  const pay = async () => {
    const prepared = await tool("prepare_allowance_payment", { ...named, to: shop, value: payment.toString(), data: "0x" });
    const delegation = await signedLeaf(prepared.delegation, agentKey, world.framework.DelegationManager, world.chain.chainId);
    const sent = { ...named, delegation, idempotency_key: randomUUID() };
    const view = await tool("send_allowance_payment", sent);
    return { ...view, again: () => tool("send_allowance_payment", sent) };
  };
  return { person, shop, pay, agentKey, ...owner, allowance };
}

/**
 * A new person's wallet `address` ("Main") granted in `allowance` mode to a personal API key named `keyName`, made in
 * the database as the Clients screen leaves it (only the key's hash is stored): the key, and the ids its allowance names.
 */
export async function apiKeyHolding(address: Address, keyName: string) {
  const { db } = await import("@/lib/db");
  const { randomBase62, randomId, sha256Hex } = await import("@/lib/crypto");
  const { API_KEY_PREFIX } = await import("@/contract");
  const userId = randomId("u_");
  await db().user.create({ data: { id: userId, email: `${userId}@example.test` } });
  const apiKey = `${API_KEY_PREFIX}${randomBase62(43)}`;
  const client = await db().client.create({
    data: { id: randomId("k_"), kind: "api_key", name: keyName, userId, keyHash: sha256Hex(apiKey), keyHint: apiKey.slice(-4) },
  });
  const grant = await db().grant.create({ data: { id: randomId("gr_"), userId, clientId: client.id, scope: "mcp" } });
  const credential = await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address } });
  await db().grantCredential.create({ data: { grantId: grant.id, credentialId: credential.id, mode: "allowance" } });
  return { apiKey, userId, grantId: grant.id, credentialId: credential.id };
}
