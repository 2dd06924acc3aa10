// npm run bench: load from this process (autocannon) against the production build (server.ts, as `npm start` runs it) on a fresh
// database with seeded people, grants, credentials, audit events and requests, beside a peer (the MCP SDK's
// stateless pattern on bare node:http doing the same list_credentials work, scripts/bench-peer.ts).
// Prints a table and writes bench/results/latest.json.
//   npm run bench -- [--scale 1,10,100] [--postgres] [--duration 10] [--connections 16] [--only mcp,peer] [--next-start]
//     [--rpc-latency 0,40] (the throughput scenarios': what the proxy in front of their chain adds to each answer, in ms)
//     [--chain-node hardhat,anvil] (the throughput scenarios' local nodes)
//   BENCH_PROFILE=<folder> also writes a V8 CPU profile of the app's server when it stops.
//   BENCH_NODE_ARGS="<flags>" adds Node flags to the app's server (a V8 setting to try, a monitor to --import).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { generateKeyPairSync, sign } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { freePort, startApp, type RunningApp } from "../e2e/support/app";
import { keccak256, parseEther, parseTransaction, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { chainsSetting, startChain, type LocalChain } from "../e2e/support/chain";
import type { ChainNode } from "@/test-chain/node";
import { deployFramework, frameworksSetting } from "@/test-chain/delegation-framework";
import { relayersSetting, signAllowanceFor } from "../e2e/support/allowances";
import { keyHolder } from "../e2e/support/key-holder";
import { deployer, deployErc20, mintFiatToken } from "../e2e/support/contracts";
import { startEip3009Facilitator } from "../e2e/support/x402-eip3009";
import { deployFiatToken } from "@/test-chain/fiat-token";
import { createUser, createWatchCredential, mcp, obtainTokens, pkcePair } from "../e2e/support/oauth";
import { db } from "@/lib/db";
import { randomId, randomSecret, sha256Base64Url, sha256Hex } from "@/lib/crypto";
import { performance } from "node:perf_hooks";
import { recordAudit } from "@/lib/audit";
import { API_KEY_PREFIX } from "@/contract";
import { eip2612Permit } from "@/lib/wallet/permit.fixture";
import { countingProxy, type CountingProxy } from "../e2e/support/rpc-counter";

const { values } = parseArgs({
  options: {
    scale: { type: "string", default: "1" },
    postgres: { type: "boolean", default: false },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "16" },
    /** comma-separated parts of scenario names: run only those (the peer always runs, for the ratio) */
    only: { type: "string" },
    /** serve the app with `next start` (/mcp through Next's routing) instead of server.ts */
    "next-start": { type: "boolean", default: false },
    /** the throughput scenarios, each at every latency (ms) the proxy in front of their chain adds to an answer */
    "rpc-latency": { type: "string", default: "0,40" },
    /**
     * the throughput scenarios' nodes: hardhat's (the tests' chain, one request at a time) and anvil (side by side, as
     * a production node answers), each with a chain, an app and a database of its own
     */
    "chain-node": { type: "string", default: "hardhat,anvil" },
    /**
     * which part this process runs: `main` (every scenario but the throughput ones: a scale's process), `throughput`
     * (only those: their process of their own, with its own chain, app and settings), or `all`
     */
    part: { type: "string", default: "all" },
  },
});
const SCALES = values.scale.split(",").map(Number);
const DURATION = Number(values.duration);
const CONNECTIONS = Number(values.connections);
/** At scale 1: people, each with a wallet, a connected client and this many audit events and requests. */
const PEOPLE = 100;
const EVENTS_PER_PERSON = 10;
const REQUESTS_PER_PERSON = 5;

type Scenario = {
  name: string;
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** per-connection request sequences, for bodies that change (refresh rotation) */
  requests?: autocannon.Request[];
  /** the server whose memory is sampled (the app unless the peer) */
  pid: number;
  /** also measured at a steady half of the rate it reached: the latency at a load the server keeps up with */
  halfLoad?: boolean;
  /** run just before the scenario is measured: what its requests spend (codes, approvals) is made then */
  prepare?: () => Promise<void>;
  /** this many requests in all, instead of --duration seconds (a scenario whose requests each spend something made ahead) */
  amount?: number;
  /** its `requests` keep no state a call cut off at the end would break: warmed up as a plain scenario is */
  stateless?: boolean;
  /** with `amount`: this many more requests first, unmeasured (what `prepare` made for them), as the JIT warms up */
  warmUpAmount?: number;
};

/**
 * Both servers load scripts/bench-request-timing.mjs, which appends each request's time inside the server here: at a
 * steady load the table gives it beside the time the load generator saw, which includes waiting for a CPU it shares.
 */
const TIMING_FILE = path.join(os.tmpdir(), `agent-wallet-bench-${process.pid}.log`);
const TIMING_IMPORT = ["--import", path.resolve("scripts/bench-request-timing.mjs")];

/**
 * DPoP proofs (RFC 9449) of an ES256 key of the bench's own, signed with node:crypto: synchronously, as autocannon's
 * setupRequest must make each request's new proof.
 */
function dpopProofs() {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const header = base64url({ typ: "dpop+jwt", alg: "ES256", jwk: publicKey.export({ format: "jwk" }) });
  return (htu: string, accessToken?: string) => {
    const ath = accessToken === undefined ? {} : { ath: sha256Base64Url(accessToken) };
    const input = `${header}.${base64url({ jti: randomId(), htm: "POST", htu, iat: Math.floor(Date.now() / 1000), ...ath })}`;
    return `${input}.${sign("sha256", Buffer.from(input), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url")}`;
  };
}

/** A refresh token and its client: one rotation chain. */
type RefreshChain = { clientId: string; token: string };

type Result = {
  scenario: string;
  scale: number;
  rate?: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  /** the server's CPU time (all its threads) per answered request */
  cpuUsPerRequest: number;
  peakRssMb: number;
  /** set when p50, p99 and max are the server's own times for the requests of the steady run before it */
  inServer?: boolean;
  /**
   * A payment's CPU in reads: what `/mcp list_credentials (JWT)` cost in the same stretch of the run (`readCpuUs`, the
   * mean of its runs just before and just after the payments), for the issues' targets in reads.
   */
  inReads?: number;
  readCpuUs?: number;
  /** a stock merchant's payment: the gas of its funding (a redemption the relayer sends) and of its settlement, mean */
  gasPerPayment?: { funding: number; settlement: number };
};

/** CPU time a process has used so far, all its threads (Linux: utime + stime in /proc/<pid>/stat). */
function cpuMs(pid: number): number {
  try {
    // The fields after the command name, which is in parentheses and may hold spaces and parentheses itself.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
/** USER_HZ, which Linux fixes at 100 on every architecture it runs Node on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** Resident memory of a process (Linux), sampled while a scenario runs; the peak is reported. */
function rssMb(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

async function measure(scenario: Scenario, scale: number, rate?: number): Promise<Result[]> {
  let peak = rssMb(scenario.pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(scenario.pid))), 200);
  const started = Date.now();
  const measured = rate ? await steady(scenario, rate) : await saturated(scenario);
  const ended = Date.now();
  clearInterval(sampler);
  const name = rate ? `${scenario.name} at ${rate}/s` : scenario.name;
  const result: Result = { scenario: name, scale, ...(rate ? { rate } : {}), ...measured, peakRssMb: Math.round(peak) };
  if (!rate) return [result];
  const inServer = await timeInServer(started, ended);
  return [result, { ...result, scenario: `${name} (in the server)`, ...inServer, inServer: true }];
}

/** Latency quantiles of sorted milliseconds, rounded. */
function quantiles(sorted: number[]): Pick<Result, "p50" | "p99" | "max"> {
  const at = (quantile: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] ?? 0);
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
}

/** The servers' own times for the requests that arrived between two instants (only one server is loaded at a time). */
async function timeInServer(from: number, to: number): Promise<Pick<Result, "p50" | "p99" | "max">> {
  await new Promise((resolve) => setTimeout(resolve, 500)); // the servers write every 200 ms
  const times = fs
    .readFileSync(TIMING_FILE, "utf8")
    .split("\n")
    .map((line) => line.split(" ").map(Number))
    .filter(([arrived]) => arrived >= from && arrived <= to)
    .map(([, milliseconds]) => milliseconds)
    .sort((a, b) => a - b);
  return quantiles(times);
}

/**
 * Unmeasured seconds before each scenario that runs for a duration. V8's optimizing compiler works through a path's
 * functions for several seconds after its first calls: with one second of warm-up it took 16–19 % of the server's
 * CPU through the first six measured seconds of request creation, a one-time cost the per-request figures then carried.
 */
const WARM_UP_SECONDS = 8;
/** PENDING_REQUESTS_PER_CREDENTIAL's default: how many of an agent's requests may wait for the person at once. */
const DEFAULT_WAITING_LIMIT = 50;
/** Above any rate request creation has reached here (938 a second on the fastest machine): agents enough for it. */
const MAX_CREATIONS_A_SECOND = 1_500;

type Measured = Pick<Result, "rps" | "p50" | "p99" | "max" | "errors" | "cpuUsPerRequest">;

/** As fast as the server answers, CONNECTIONS requests at a time (autocannon); `warm`: after a warm-up of its own. */
async function saturated(scenario: Scenario, warm = true): Promise<Measured> {
  const load = {
    url: scenario.url,
    method: scenario.method ?? "POST",
    headers: scenario.headers,
    body: scenario.body,
    requests: scenario.requests,
    connections: CONNECTIONS,
  } as const;
  // Unmeasured: the first calls of a path load its modules and warm the JIT. Not for request sequences: their
  // state would be left with calls cut off at the end; those that spend what `prepare` made warm up on their own.
  if (warm && (!scenario.requests || scenario.stateless)) await autocannon({ ...load, duration: WARM_UP_SECONDS });
  await scenario.prepare?.();
  if (scenario.warmUpAmount) await autocannon({ ...load, amount: scenario.warmUpAmount });
  const cpuBefore = cpuMs(scenario.pid);
  const result = await autocannon({ ...load, ...(scenario.amount ? { amount: scenario.amount } : { duration: DURATION }) });
  const cpu = cpuMs(scenario.pid) - cpuBefore;
  const expectedFailures = scenario.name.includes("401");
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.errors + result.timeouts + (expectedFailures ? result["2xx"] : result.non2xx),
    cpuUsPerRequest: Math.round((cpu * 1000) / Math.max(1, result.requests.total)),
  };
}

/** One request every 1/rate s whatever the answers do (an open loop), from a process of its own (scripts/bench-steady.mjs). */
async function steady(scenario: Scenario, rate: number): Promise<Measured> {
  const load = { url: scenario.url, method: scenario.method, headers: scenario.headers, body: scenario.body, rate, duration: DURATION };
  const cpuBefore = cpuMs(scenario.pid);
  const child = spawn(process.execPath, [path.resolve("scripts/bench-steady.mjs"), JSON.stringify(load)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`the steady load generator exited with ${code}`);
  const cpu = cpuMs(scenario.pid) - cpuBefore;
  const { latencies, errors, seconds } = JSON.parse(output) as { latencies: number[]; errors: number; seconds: number };
  latencies.sort((a, b) => a - b);
  const cpuUsPerRequest = Math.round((cpu * 1000) / Math.max(1, latencies.length));
  return { rps: Math.round(latencies.length / seconds), ...quantiles(latencies), errors, cpuUsPerRequest };
}

/** PEOPLE × scale people with a wallet, a grant to one client, audit events and decided requests. */
async function seed(scale: number) {
  const people = PEOPLE * scale;
  const now = new Date();
  for (let start = 0; start < people; start += 500) {
    const batch = Array.from({ length: Math.min(500, people - start) }, () => ({
      userId: randomId("u_"),
      credentialId: randomId("cr_"),
      clientId: randomId("c_"),
      grantId: randomId("g_"),
    }));
    await db().user.createMany({ data: batch.map((row) => ({ id: row.userId, email: `${row.userId}@bench.test` })) });
    await db().credential.createMany({
      data: batch.map((row) => ({
        id: row.credentialId,
        userId: row.userId,
        name: "Main",
        kind: "evm_watch",
        address: `0x${"ab".repeat(20)}`,
      })),
    });
    await db().client.createMany({ data: batch.map((row) => ({ id: row.clientId, kind: "oauth", name: "Seeded agent" })) });
    await db().grant.createMany({
      data: batch.map((row) => ({ id: row.grantId, userId: row.userId, clientId: row.clientId, scope: "mcp", createdAt: now })),
    });
    await db().grantCredential.createMany({
      data: batch.map((row) => ({ grantId: row.grantId, credentialId: row.credentialId, mode: "read" })),
    });
    await db().agentRequest.createMany({
      data: batch.flatMap((row) =>
        Array.from({ length: REQUESTS_PER_PERSON }, () => ({
          id: randomId("rq_"),
          userId: row.userId,
          grantId: row.grantId,
          clientId: row.clientId,
          credentialId: row.credentialId,
          kind: "sign_message",
          status: "completed",
          payload: JSON.stringify({ kind: "sign_message", message: "seeded" }),
          digest: "0x",
          createdAt: now,
          expiresAt: now,
        })),
      ),
    });
    // Through the real append path (group commit), so the chain stays verifiable.
    await Promise.all(
      batch.flatMap((row) =>
        Array.from({ length: EVENTS_PER_PERSON }, (_, index) =>
          recordAudit({ type: "mcp.tool_called", userId: row.userId, clientId: row.clientId, data: { tool: "list_credentials", index } }),
        ),
      ),
    );
  }
}

/** A personal API key for a read grant on `credentialId`, written as the Clients screen would. */
async function apiKeyFor(userId: string, credentialId: string, mode: "read" | "approve" = "read"): Promise<string> {
  const key = `${API_KEY_PREFIX}${randomSecret()}`;
  const clientId = randomId("c_");
  await db().client.create({
    data: { id: clientId, kind: "api_key", name: "Bench key", userId, keyHash: sha256Hex(key), keyHint: key.slice(-4) },
  });
  await db().grant.create({
    data: {
      id: randomId("g_"),
      userId,
      clientId,
      scope: "mcp",
      createdAt: new Date(),
      credentials: { create: [{ credentialId, mode }] },
    },
  });
  return key;
}

async function startPeer(app: RunningApp): Promise<{ url: string; pid: number; stop: () => void }> {
  const port = await freePort();
  // tsx as a loader in the peer's own process (not its CLI, which serves from a child): the pid sampled for memory
  // is the server's.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const child: ChildProcess = spawn(process.execPath, ["--import", tsx, ...TIMING_IMPORT, "scripts/bench-peer.ts"], {
    env: { ...process.env, PEER_PORT: String(port), DATABASE_URL: app.databaseUrl, DATA_DIR: app.dataDir, BENCH_TIMING_FILE: TIMING_FILE },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => String(chunk).includes("listening") && resolve());
    child.once("exit", (code) => reject(new Error(`the peer exited (${code})`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, pid: child.pid!, stop: () => child.kill("SIGTERM") };
}

const mcpBody = (method: string, params: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
const toolCall = (name: string, args: Record<string, unknown> = {}) => mcpBody("tools/call", { name, arguments: args });
/** The same call as a 2026-07-28 client sends it: the per-request _meta envelope and the standard headers. */
const modernToolCall = (name: string) =>
  mcpBody("tools/call", {
    name,
    arguments: {},
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
    },
  });

/** The read the payments' targets are counted in. */
const READ = "/mcp list_credentials (JWT)";
const ALLOWANCE_SPEND = "/mcp send_transaction from an allowance (to its tx hash)";
const X402_PAYMENT = "/mcp pay_x402 within an allowance (to its header)";
/** Payments of one allowance take turns (each under its lease), so they are timed one after another. */
const ALLOWANCE_SPENDS = 200;

/**
 * Unmeasured payments before the measured ones, and at least for as long as the other scenarios warm up. V8 optimizes
 * a function once it has run a budget of its bytecodes, so a function a payment runs once needs hundreds of payments,
 * where a read's path gets there within the thousands of calls of its eight seconds. After 220 payments the measured
 * 200 transfers still had 99 functions compiled during them (390 ms of the compiler's CPU, 2 ms a payment); after
 * 1,500, 47 (190 ms). A transfer takes about 40 ms (the chain mines each), so this warm-up takes 40 s.
 */
const WARM_UP_SPENDS = 1_000;

/** The most payments an allowance allows (lib/allowances/caveats.ts): enough for the warm-up and the measured ones. */
const ALLOWANCE_TRANSACTIONS = 10_000;

/** What a payment scenario runs against: the app and its chain, the MCP headers, and the read it is counted in. */
type PaymentBench = {
  app: RunningApp;
  chain: LocalChain;
  scale: number;
  headers: Record<string, string>;
  read: () => Promise<Measured>;
};

/**
 * Payments one after another, each timed from its request to its answer, which `paid` recognizes: the warm-up's by one
 * agent, the measured ones by another (`agent()` makes one, its allowance new, and gives its token and the call's
 * body), so that what the warm-up leaves behind (an x402 payment's held amount, which each later payment of the
 * allowance counts) is not measured. `read()` measures the yardstick, a read, just before the payments and just after:
 * the machine's speed drifts by a fifth within minutes, more than between a read measured beside the payments and the
 * payments.
 */
async function inTurn(
  { app, scale, headers, read }: PaymentBench,
  scenario: string,
  agent: () => Promise<{ accessToken: string; body: string }>,
  paid: RegExp,
): Promise<Result> {
  const caller = async () => {
    const { accessToken, body } = await agent();
    return () => fetch(`${app.baseUrl}/mcp`, { method: "POST", headers: { ...headers, Authorization: `Bearer ${accessToken}` }, body });
  };
  const warmUntil = performance.now() + WARM_UP_SECONDS * 1000;
  const warming = await caller();
  for (let index = 0; index < WARM_UP_SPENDS || performance.now() < warmUntil; index++) {
    // Each answer read to its end, as the measured ones are: an unread body holds its connection until the server's
    // cap on connections refuses new ones. A warm-up refused would warm the refusal's path instead: it stops the run.
    const text = await (await warming()).text();
    if (!paid.test(text)) throw new Error(`a warm-up payment (${scenario}) was not paid: ${text.slice(0, 300)}`);
  }
  const readBefore = await read();
  const call = await caller();
  let peak = rssMb(app.pid);
  const cpuBefore = cpuMs(app.pid);
  const started = performance.now();
  const latencies: number[] = [];
  let errors = 0;
  for (let index = 0; index < ALLOWANCE_SPENDS; index++) {
    const sent = performance.now();
    const text = await (await call()).text();
    latencies.push(Math.round(performance.now() - sent));
    if (!paid.test(text)) errors++;
    peak = Math.max(peak, rssMb(app.pid));
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuMs(app.pid) - cpuBefore;
  const readAfter = await read();
  const cpuUsPerRequest = Math.round((cpu * 1000) / ALLOWANCE_SPENDS);
  const readCpuUs = Math.round((readBefore.cpuUsPerRequest + readAfter.cpuUsPerRequest) / 2);
  return {
    scenario,
    scale,
    rps: Math.round(ALLOWANCE_SPENDS / seconds),
    ...quantiles(latencies.sort((a, b) => a - b)),
    errors,
    cpuUsPerRequest,
    peakRssMb: Math.round(peak),
    inReads: Math.round((cpuUsPerRequest / readCpuUs) * 100) / 100,
    readCpuUs,
  };
}

/** A person whose wallet signed an allowance (`spec`) for an agent's grant, as the consent ceremony leaves it. */
async function agentWithAllowance(app: RunningApp, chain: LocalChain, spec: Parameters<typeof signAllowanceFor>[3]) {
  const person = privateKeyToAccount(generatePrivateKey());
  await chain.fund(person.address, "10");
  let credentialId = "";
  const { tokens, user, grantId } = await obtainTokens(app, {
    credentials: async (userId) => {
      credentialId = (
        await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Payer", kind: "evm", address: person.address } })
      ).id;
      return [{ credentialId, mode: "approve" }];
    },
  });
  await db().grantCredential.update({ where: { grantId_credentialId: { grantId, credentialId } }, data: { mode: "allowance" } });
  const { id: allowanceId } = await signAllowanceFor(chain, person, { userId: user.id, credentialId, grantId }, spec);
  return { credentialId, accessToken: tokens.access_token, person: person.address, allowanceId };
}

/** An agent with an allowance of 2 ETH a day to `shop`, and its send_transaction of 0.001 ETH there. */
async function shopPayer(app: RunningApp, chain: LocalChain, shop: Address) {
  const { credentialId, accessToken } = await agentWithAllowance(app, chain, {
    recipients: [shop],
    native: parseEther("2"),
    transactions: ALLOWANCE_TRANSACTIONS,
    overLimit: "refuse",
  });
  // 0.001 ETH: above the smallest payment an allowance relays
  const body = toolCall("send_transaction", { credential_id: credentialId, chain_id: chain.chainId, to: shop, value: "1000000000000000" });
  return { accessToken, body };
}

/**
 * The time from an MCP tools/call send_transaction to its transaction hash for a payment from an allowance, on the
 * local chain with the Delegation Framework: policy, the enforcers' view calls, the simulation, the relayer's
 * redemption and its receipt (hardhat mines each at once).
 */
async function allowanceSpends(bench: PaymentBench): Promise<Result> {
  const { app, chain } = bench;
  const shop = privateKeyToAccount(generatePrivateKey()).address;
  return inTurn(bench, ALLOWANCE_SPEND, () => shopPayer(app, chain, shop), /"tx_hash":"0x[0-9a-f]{64}"/);
}

/**
 * The time from an MCP tools/call pay_x402 to its answer for an x402 payment within a token allowance: the delegate
 * key signs a one-time leaf, nothing is sent on chain (no facilitator redeems them here, so every payment stays held
 * and each one counts all the holds before it).
 */
async function x402Payments(bench: PaymentBench): Promise<Result> {
  const { app, chain } = bench;
  const merchant = privateKeyToAccount(generatePrivateKey()).address;
  const facilitator = privateKeyToAccount(generatePrivateKey()).address;
  const token = await deployErc20(chain, { name: "USD Coin", symbol: "USDC", supply: 10n ** 12n, holder: merchant });
  const required = {
    x402Version: 2,
    resource: { url: "https://api.example.test/report", description: "Today's market report" },
    accepts: [
      {
        scheme: "exact",
        network: `eip155:${chain.chainId}`,
        amount: "10000",
        asset: token,
        payTo: merchant,
        maxTimeoutSeconds: 120,
        extra: { name: "USD Coin", version: "2", assetTransferMethod: "erc7710", facilitatorAddresses: [facilitator] },
      },
    ],
  };
  const agent = async () => {
    const { credentialId, accessToken } = await agentWithAllowance(app, chain, {
      recipients: [merchant],
      native: undefined,
      tokens: [{ address: token, perPeriod: 10n ** 12n }],
      transactions: ALLOWANCE_TRANSACTIONS,
      overLimit: "refuse",
    });
    const body = toolCall("pay_x402", {
      credential_id: credentialId,
      payment_required: Buffer.from(JSON.stringify(required)).toString("base64"),
    });
    return { accessToken, body };
  };
  return inTurn(bench, X402_PAYMENT, agent, /"header":"PAYMENT-SIGNATURE"/);
}

const STOCK_MERCHANT = "/mcp pay_x402 at a stock merchant (eip3009, 2 s blocks)";
const STOCK_MERCHANT_FLOAT = "/mcp pay_x402 at a stock merchant from a float (eip3009, 2 s blocks)";
/** The float of the second run (decision 0038): a hundred payments, more than the warm-up and the run take between blocks. */
const STOCK_FLOAT = 1_000_000n;
/** Each waits for its funding's block: fewer than the other payments' 200 and 1,000, about 2 s each. */
const STOCK_PAYMENTS = 30;
const STOCK_WARM_UP = 10;
/** Of the measured payments, the last this many are settled by the facilitator for their gas. */
const STOCK_SETTLED = 5;

/**
 * The time from an MCP tools/call pay_x402 to its answer for a stock merchant's offer (`exact` by eip3009, Circle's
 * USDC) within an allowance for any payee, on 2-second blocks (decision 0035): the allowance funds the agent's account
 * with the payment (a redemption the relayer sends, waited for until mined), then that account signs EIP-3009's
 * authorization. One after another, by one agent (its warm-up first), then the last few settled by `@x402/evm`'s own
 * facilitator: the gas of a payment is its funding's and its settlement's. With a `float` (decision 0038), the first
 * payment funds itself and the float, and the others are signed from the float at once, each topped up in the
 * background (a funding's gas is then a top-up's, which covers one payment or several).
 */
async function stockMerchantPayments({ app, chain, scale, headers }: PaymentBench, float?: bigint): Promise<Result> {
  const scenario = float === undefined ? STOCK_MERCHANT : STOCK_MERCHANT_FLOAT;
  const merchant = privateKeyToAccount(generatePrivateKey()).address;
  const token = (await deployFiatToken(chain)).address;
  const facilitator = await startEip3009Facilitator(chain);
  const offer = {
    scheme: "exact",
    network: `eip155:${chain.chainId}`,
    amount: "10000",
    asset: token,
    payTo: merchant,
    maxTimeoutSeconds: 300,
    extra: { name: "USD Coin", version: "2" },
  };
  const required = { x402Version: 2, resource: { url: "https://api.example.test/report", description: "A report" }, accepts: [offer] };
  const { credentialId, accessToken, person, allowanceId } = await agentWithAllowance(app, chain, {
    recipients: [],
    anyPayee: true,
    native: undefined,
    tokens: [{ address: token, perPeriod: 10n ** 12n, perPayment: 10_000n, float }],
    transactions: ALLOWANCE_TRANSACTIONS,
    overLimit: "refuse",
  });
  await mintFiatToken(chain, token, person, 10n ** 12n);
  const body = toolCall("pay_x402", {
    credential_id: credentialId,
    payment_required: Buffer.from(JSON.stringify(required)).toString("base64"),
  });
  const call = () => fetch(`${app.baseUrl}/mcp`, { method: "POST", headers: { ...headers, Authorization: `Bearer ${accessToken}` }, body });
  const paid = /"header":"PAYMENT-SIGNATURE","value":"([A-Za-z0-9+/=]+)"/;
  return chain.miningEvery(BLOCK_MS, async () => {
    for (let index = 0; index < STOCK_WARM_UP; index++) {
      const text = await (await call()).text();
      if (!paid.test(text)) throw new Error(`a warm-up payment (${scenario}) was not paid: ${text.slice(0, 300)}`);
    }
    const latencies: number[] = [];
    const values: string[] = [];
    let errors = 0;
    let peak = rssMb(app.pid);
    const cpuBefore = cpuMs(app.pid);
    const started = performance.now();
    for (let index = 0; index < STOCK_PAYMENTS; index++) {
      const sent = performance.now();
      const text = await (await call()).text();
      latencies.push(Math.round(performance.now() - sent));
      const value = paid.exec(text)?.[1];
      if (value) values.push(value);
      else errors++;
      peak = Math.max(peak, rssMb(app.pid));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuMs(app.pid) - cpuBefore;
    // one after another: the facilitator's one key sends each
    const settlements: bigint[] = [];
    for (const value of values.slice(-STOCK_SETTLED)) {
      const payload = JSON.parse(Buffer.from(value, "base64").toString("utf8")) as Parameters<typeof facilitator.settle>[0];
      const settled = await facilitator.settle(payload, offer as Parameters<typeof facilitator.settle>[1]);
      if (!settled.success) throw new Error(`the facilitator did not settle a payment: ${settled.errorReason}`);
      settlements.push((await chain.client.getTransactionReceipt({ hash: settled.transaction as Hex })).gasUsed);
    }
    const fundings = await db().allowanceSpend.findMany({ where: { allowanceId }, orderBy: { createdAt: "desc" }, take: STOCK_SETTLED });
    const fundingGas = await Promise.all(
      fundings.map(async (spend) => (await chain.client.getTransactionReceipt({ hash: spend.txHash as Hex })).gasUsed),
    );
    const mean = (gas: bigint[]) => Math.round(Number(gas.reduce((sum, one) => sum + one, 0n)) / Math.max(1, gas.length));
    return {
      scenario,
      scale,
      rps: Math.round((STOCK_PAYMENTS / seconds) * 100) / 100,
      ...quantiles(latencies.sort((a, b) => a - b)),
      errors,
      cpuUsPerRequest: Math.round((cpu * 1000) / STOCK_PAYMENTS),
      peakRssMb: Math.round(peak),
      gasPerPayment: { funding: mean(fundingGas), settlement: mean(settlements) },
    };
  });
}

/** The throughput scenarios' part of a name, for `--only` (issue 55: throughput near the chain's). */
const THROUGHPUT = "throughput";
/** Their blocks: hardhat's interval mining, a block every 2 s with a mempool, as the issue's chain. */
const BLOCK_MS = 2000;
/** One allowance: this many payments, this many in flight at a time. */
const ONE_ALLOWANCE_PAYMENTS = 40;
const ONE_ALLOWANCE_CONCURRENCY = 20;
/** Many allowances: this many agents, each of a person and an allowance of its own, all their payments sent at once. */
const MANY_AGENTS = 20;
/** At least this many payments each; more when half a block holds more than MANY_AGENTS × this (the target is offered). */
const LEAST_PAYMENTS_PER_AGENT = 5;
/** Steady arrivals: half a block's worth sent evenly over each block, for this many blocks, by the many agents. */
const STEADY_BLOCKS = 5;
/** Payments before the measured ones, by an agent of their own, one after another while each block is mined at once. */
const THROUGHPUT_WARM_UP = 50;
/** The issue's targets: payments a block for one allowance, the share of a block used across many, the p50. */
const TARGET_ONE_PER_BLOCK = 10;
const TARGET_MANY_SHARE = 0.5;
const TARGET_P50_MS = BLOCK_MS;
/** How long the proxy is watched with nothing sent, for what the server asks of the node on its own (reconciliation). */
const IDLE_WATCH_MS = 10_000;

type Throughput = {
  scenario: string;
  database: "sqlite" | "postgresql";
  /** what the proxy adds to each JSON-RPC answer */
  rpcLatencyMs: number;
  agents: number;
  concurrency: number;
  sent: number;
  /** answered completed with its transaction hash: mined and recorded */
  landed: number;
  /** answered with a transaction hash not seen mined within the server's minute */
  pending: number;
  /** refused or failed, by the answer's words: counted, never dropped */
  refused: number;
  refusals: Record<string, number>;
  seconds: number;
  paymentsPerSecond: number;
  /** landed payments over the blocks from the first that holds one of them to the last */
  blocks: number;
  perBlock: number;
  mostInABlock: number;
  /** how many of the payments each block of that span holds, in order */
  byBlock: number[];
  gasPerPayment: number;
  blockGasLimit: number;
  /** payments a block holds: its gas limit over a payment's gas */
  blockCapacity: number;
  /** perBlock and mostInABlock over blockCapacity */
  capacityUsed: number;
  mostCapacityUsed: number;
  /** from tools/call to its answer, all answers */
  p50: number;
  p95: number;
  max: number;
  /**
   * p50 of a landed payment's stretches: tools/call to its transaction reaching the node (eth_sendRawTransaction at the
   * proxy), to the bench seeing the block that holds it (eth_blockNumber every 25 ms), to its answer
   */
  toBroadcastP50: number;
  toBlockP50: number;
  toAnswerP50: number;
  /**
   * p50 of how many blocks a landed payment waited: its block's number less that of the newest block the bench had seen
   * when the payment's tools/call went out (1: it landed in the first block after its call)
   */
  blocksToLandP50: number;
  /** JSON-RPC calls the server forwarded through the proxy from the first tools/call to the last answer */
  rpcCalls: number;
  rpcPerPayment: number;
  rpcByMethod: Record<string, number>;
  /** the server's CPU time (all threads) over the scenario, per landed payment */
  cpuMsPerPayment: number;
  /**
   * The node's own ceiling (many allowances): the scenario's landed transactions sent again straight to the node, from
   * the chain as it was before the scenario, as fast as it takes them; how many it mined a block (mean and most).
   */
  node?: { perBlock: number; mostInABlock: number; byBlock: number[] };
  /**
   * Steady arrivals: the mean of the blocks wholly inside the sending (the span's first and last hold only what came
   * after the first call or before the last one), and its share of a block's capacity.
   */
  fullBlocks?: { perBlock: number; capacityUsed: number };
  target: string;
  met: boolean;
};

/** A tools/call answer's JSON (the server answers JSON, not an event stream, to these). */
type ToolAnswer = {
  result?: { isError?: boolean; content?: { text?: string }[]; structuredContent?: { status?: string; tx_hash?: string | null } };
  error?: { message?: string };
};

/** What a payment's answer says: landed (completed, with its hash), pending (a hash, not yet mined), or refused (why). */
function answered(status: number, text: string): { landed?: Hex; pending?: Hex; refused?: string } {
  let answer: ToolAnswer;
  try {
    answer = JSON.parse(text) as ToolAnswer;
  } catch {
    return { refused: `HTTP ${status}: ${text.slice(0, 80)}` };
  }
  const view = answer.result?.structuredContent;
  const hash = view?.tx_hash as Hex | null | undefined;
  if (!answer.result?.isError && view?.status === "completed" && hash) return { landed: hash };
  if (hash && view?.status === "submitted") return { pending: hash };
  if (view?.status === "pending") return { refused: "sent to the person for approval" };
  const words = answer.error?.message ?? answer.result?.content?.[0]?.text ?? text;
  // the words without the figures that differ between calls (amounts, times, hashes)
  return { refused: words.replace(/0x[0-9a-fA-F]+|\d[\d.:TZ-]*/g, "…").slice(0, 100) };
}

/** How many of some transactions each block holds, from the first block holding one to the `last`, given each one's block. */
function blocksHolding(numbers: bigint[]): { byBlock: number[]; last: bigint | undefined } {
  if (!numbers.length) return { byBlock: [], last: undefined };
  const first = numbers.reduce((a, b) => (b < a ? b : a));
  const last = numbers.reduce((a, b) => (b > a ? b : a));
  const byBlock = Array.from({ length: Number(last - first) + 1 }, () => 0);
  for (const number of numbers) byBlock[Number(number - first)]++;
  return { byBlock, last };
}

/** A sorted list's value at a quantile, rounded. */
const at = (sorted: number[], quantile: number) =>
  Math.round(sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] ?? 0);
const ascending = (values: number[]) => [...values].sort((a, b) => a - b);

/** What a throughput run watches: the chain's blocks as they come, and each transaction as it reaches the node. */
type Watch = { blockSeenAt: Map<bigint, number>; broadcastAt: Map<string, number>; stop: () => void };

function watchBlocks(chain: LocalChain, broadcastAt: Map<string, number>): Watch {
  const blockSeenAt = new Map<bigint, number>();
  // eth_blockNumber asked directly (viem's getBlockNumber answers from a cache for seconds)
  const timer = setInterval(() => {
    void chain.client.request({ method: "eth_blockNumber" }).then(
      (number) => {
        const block = BigInt(number);
        if (!blockSeenAt.has(block)) blockSeenAt.set(block, performance.now());
      },
      () => {},
    );
  }, 25);
  return { blockSeenAt, broadcastAt, stop: () => clearInterval(timer) };
}

/** An agent's tools/call: its bearer and the call's body. */
type Payer = { accessToken: string; body: string };

/**
 * Sends `payers`' payments, `concurrency` in flight at a time (each payer's in the order given), or, given
 * `arrivalEveryMs`, one every that many ms whatever is in flight (steady arrivals, as many agents paying on their own
 * would); each timed from its tools/call to its answer. Then reads every landed payment's receipt from the node
 * directly (not through the proxy, so the bench's reads are not counted as the server's) and sums up.
 */
async function paymentsThroughput(
  world: {
    app: RunningApp;
    chain: LocalChain;
    proxy: CountingProxy;
    watch: Watch;
    headers: Record<string, string>;
    database: Throughput["database"];
  },
  scenario: string,
  payers: Payer[],
  concurrency: number,
  rpcLatencyMs: number,
  arrivalEveryMs?: number,
): Promise<Omit<Throughput, "target" | "met">> {
  const { app, chain, proxy, watch, headers } = world;
  const queue = [...payers];
  const answers: { sentAt: number; answeredAt: number; landed?: Hex; pending?: Hex; refused?: string }[] = [];
  const rpcFrom = proxy.methods.length;
  const cpuBefore = cpuMs(app.pid);
  const started = performance.now();
  const pay = async (payer: Payer) => {
    const sentAt = performance.now();
    try {
      const response = await fetch(`${app.baseUrl}/mcp`, {
        method: "POST",
        headers: { ...headers, Authorization: `Bearer ${payer.accessToken}` },
        body: payer.body,
      });
      answers.push({ sentAt, answeredAt: performance.now(), ...answered(response.status, await response.text()) });
    } catch (error) {
      answers.push({ sentAt, answeredAt: performance.now(), refused: `no answer: ${(error as Error).message}` });
    }
  };
  await Promise.all(
    arrivalEveryMs
      ? payers.map(async (payer, index) => {
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + index * arrivalEveryMs - performance.now())));
          await pay(payer);
        })
      : Array.from({ length: concurrency }, async () => {
          for (let payer = queue.shift(); payer; payer = queue.shift()) await pay(payer);
        }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuMs(app.pid) - cpuBefore;
  const rpc = proxy.methods.slice(rpcFrom);
  const landed = answers.filter((answer) => answer.landed);
  const receipts = await Promise.all(landed.map((answer) => chain.client.getTransactionReceipt({ hash: answer.landed! })));
  const numbers = receipts.map((receipt) => receipt.blockNumber);
  const { byBlock, last } = blocksHolding(numbers);
  const gasPerPayment = receipts.length
    ? Math.round(receipts.reduce((sum, receipt) => sum + Number(receipt.gasUsed), 0) / receipts.length)
    : 0;
  const blockGasLimit = Number((await chain.client.getBlock({ blockNumber: landed.length ? last : undefined })).gasLimit);
  const blockCapacity = gasPerPayment ? Math.floor(blockGasLimit / gasPerPayment) : 0;
  const perBlock = byBlock.length ? landed.length / byBlock.length : 0;
  const mostInABlock = Math.max(0, ...byBlock);
  const refusals: Record<string, number> = {};
  for (const { refused } of answers) if (refused) refusals[refused] = (refusals[refused] ?? 0) + 1;
  const rpcByMethod: Record<string, number> = {};
  for (const method of rpc) rpcByMethod[method] = (rpcByMethod[method] ?? 0) + 1;
  const latencies = ascending(answers.map((answer) => answer.answeredAt - answer.sentAt));
  const stretches = landed.flatMap((answer, index) => {
    const broadcast = watch.broadcastAt.get(answer.landed!.toLowerCase());
    const block = watch.blockSeenAt.get(numbers[index]);
    return broadcast && block
      ? [{ toBroadcast: broadcast - answer.sentAt, toBlock: block - broadcast, toAnswer: answer.answeredAt - block }]
      : [];
  });
  const stretch = (key: keyof (typeof stretches)[number]) => at(ascending(stretches.map((one) => one[key])), 0.5);
  const seen = [...watch.blockSeenAt.entries()];
  const blocksWaited = landed.flatMap((answer, index) => {
    const before = seen.filter(([, seenAt]) => seenAt <= answer.sentAt).map(([number]) => number);
    return before.length ? [Number(numbers[index] - before.reduce((a, b) => (b > a ? b : a)))] : [];
  });
  const share = (payments: number) => (blockCapacity ? Math.round((payments / blockCapacity) * 1000) / 1000 : 0);
  return {
    scenario,
    database: world.database,
    rpcLatencyMs,
    agents: new Set(payers.map((payer) => payer.accessToken)).size,
    concurrency,
    sent: payers.length,
    landed: landed.length,
    pending: answers.filter((answer) => answer.pending).length,
    refused: answers.filter((answer) => answer.refused).length,
    refusals,
    seconds: Math.round(seconds * 10) / 10,
    paymentsPerSecond: Math.round((landed.length / seconds) * 100) / 100,
    blocks: byBlock.length,
    perBlock: Math.round(perBlock * 100) / 100,
    mostInABlock,
    byBlock,
    gasPerPayment,
    blockGasLimit,
    blockCapacity,
    capacityUsed: share(perBlock),
    mostCapacityUsed: share(mostInABlock),
    p50: at(latencies, 0.5),
    p95: at(latencies, 0.95),
    max: at(latencies, 1),
    toBroadcastP50: stretch("toBroadcast"),
    toBlockP50: stretch("toBlock"),
    toAnswerP50: stretch("toAnswer"),
    blocksToLandP50: at(ascending(blocksWaited), 0.5),
    rpcCalls: rpc.length,
    rpcPerPayment: landed.length ? Math.round((rpc.length / landed.length) * 10) / 10 : 0,
    rpcByMethod,
    cpuMsPerPayment: landed.length ? Math.round((cpu / landed.length) * 10) / 10 : 0,
  };
}

/**
 * Payments' throughput on 2-second blocks (issue 55): a fresh chain (hardhat's interval mining every BLOCK_MS) behind a
 * proxy that counts every JSON-RPC call the server makes and adds `rpcLatencyMs` to each answer, as a hosted provider
 * does; a fresh app and database. For each latency: one allowance whose agent sends ONE_ALLOWANCE_PAYMENTS,
 * ONE_ALLOWANCE_CONCURRENCY at a time; then MANY_AGENTS agents, each of a person and an allowance of its own, sending
 * their payments all at once; then the same agents' payments arriving evenly, half a block's worth a block, over
 * STEADY_BLOCKS blocks. The targets are reported beside the figures; a miss does not fail the bench.
 */
async function throughputs(database: "sqlite" | "postgres", latencies: number[], chainNode: ChainNode): Promise<Throughput[]> {
  const chain = await startChain({ node: chainNode });
  const framework = await deployFramework(chain);
  const broadcastAt = new Map<string, number>();
  const signed = new Map<string, Hex>();
  const proxy = await countingProxy(chain.rpcUrl, {
    before: async (call) => {
      if (call.method !== "eth_sendRawTransaction") return;
      const raw = call.params![0] as Hex;
      broadcastAt.set(keccak256(raw), performance.now());
      signed.set(keccak256(raw), raw);
    },
  });
  const app = await startApp({
    database,
    env: {
      CHAINS: chainsSetting({ ...chain, rpcUrl: proxy.rpcUrl }),
      ALLOWANCE_FRAMEWORKS: frameworksSetting(chain, framework),
      // one relayer's nonce lease would be the bottleneck: several send side by side
      ALLOWANCE_RELAYERS: relayersSetting(chain, THROUGHPUT_RELAYERS),
      ...GENEROUS_SETTINGS,
    },
  });
  const watch = watchBlocks(chain, broadcastAt);
  const results: Throughput[] = [];
  try {
    const shop = privateKeyToAccount(generatePrivateKey()).address;
    const payer = (): Promise<Payer> => shopPayer(app, chain, shop);
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-06-18",
    };
    const world = { app, chain, proxy, watch, headers, database: database === "postgres" ? ("postgresql" as const) : ("sqlite" as const) };
    // Warmed while each transaction is mined at once: the path's modules loaded, the JIT under way; what a payment costs
    // in gas read from these. Every agent is made now too: an allowance's set-up is transactions of its own.
    const warming = await payer();
    const warmHashes: Hex[] = [];
    for (let index = 0; index < THROUGHPUT_WARM_UP; index++) {
      const response = await fetch(`${app.baseUrl}/mcp`, {
        method: "POST",
        headers: { ...headers, Authorization: `Bearer ${warming.accessToken}` },
        body: warming.body,
      });
      const { landed, refused } = answered(response.status, await response.text());
      if (!landed) throw new Error(`a warm-up payment was not paid: ${refused}`);
      warmHashes.push(landed);
    }
    const warmReceipt = await chain.client.getTransactionReceipt({ hash: warmHashes.at(-1)! });
    const { gasLimit } = await chain.client.getBlock({ blockNumber: warmReceipt.blockNumber });
    const halfABlock = Math.ceil((Number(gasLimit) / Number(warmReceipt.gasUsed)) * TARGET_MANY_SHARE);
    const perAgent = Math.max(LEAST_PAYMENTS_PER_AGENT, Math.ceil(halfABlock / MANY_AGENTS));
    const prepared: { one: Payer; many: Payer[] }[] = [];
    for (let index = 0; index < latencies.length; index++) {
      const one = await payer();
      const many: Payer[] = [];
      for (let index = 0; index < MANY_AGENTS; index++) many.push(await payer());
      prepared.push({ one, many });
    }
    await chain.mineEvery(BLOCK_MS);
    // What the server asks of the node with nothing to pay, over the same proxy: background work the figures include.
    const idleFrom = proxy.methods.length;
    await new Promise((resolve) => setTimeout(resolve, IDLE_WATCH_MS));
    const idle = proxy.methods.slice(idleFrom);
    console.log(
      `\nthroughput: ${idle.length} JSON-RPC calls in ${IDLE_WATCH_MS / 1000} s with nothing to pay` +
        `${idle.length ? ` (${[...new Set(idle)].join(", ")})` : ""}; a payment uses ${warmReceipt.gasUsed} gas of a block's ${gasLimit}`,
    );
    for (const [index, rpcLatencyMs] of latencies.entries()) {
      proxy.delayAnswers(rpcLatencyMs);
      const { one, many } = prepared[index];
      const blocks = `${chainNode}, ${BLOCK_MS / 1000} s blocks, RPC +${rpcLatencyMs} ms`;
      const single = await paymentsThroughput(
        world,
        `${THROUGHPUT}: one allowance (${blocks})`,
        Array.from({ length: ONE_ALLOWANCE_PAYMENTS }, () => one),
        ONE_ALLOWANCE_CONCURRENCY,
        rpcLatencyMs,
      );
      results.push({
        ...single,
        target: `≥ ${TARGET_ONE_PER_BLOCK} payments a block, p50 ≤ ${TARGET_P50_MS} ms`,
        met: single.perBlock >= TARGET_ONE_PER_BLOCK && single.p50 <= TARGET_P50_MS && single.refused === 0,
      });
      // the next scenario starts on a quiet chain: what this one sent is mined
      await settled(chain);
      // each agent's payments one after another in the queue, all of them in flight at once
      const spread = Array.from({ length: perAgent }, () => many).flat();
      const before = (await chain.client.request({ method: "evm_snapshot" as never })) as Hex;
      const signedBefore = signed.size;
      const across = await paymentsThroughput(world, `${THROUGHPUT}: many allowances (${blocks})`, spread, spread.length, rpcLatencyMs);
      await settled(chain);
      const node = await nodeCeiling(chain, before, [...signed.values()].slice(signedBefore));
      // the same block numbers came again with the replay: the next scenario times its own
      watch.blockSeenAt.clear();
      results.push({
        ...across,
        node,
        target: `≥ ${TARGET_MANY_SHARE * 100} % of a block's capacity, p50 ≤ ${TARGET_P50_MS} ms`,
        met: across.capacityUsed >= TARGET_MANY_SHARE && across.p50 <= TARGET_P50_MS && across.refused === 0,
      });
      await settled(chain);
      // The same agents again, their payments arriving evenly (half a block's worth each block) over STEADY_BLOCKS
      // blocks: what a block holds when payments keep coming, not bounded by how many blocks one burst spans.
      const steadily = Array.from({ length: Math.ceil((halfABlock * STEADY_BLOCKS) / MANY_AGENTS) }, () => many).flat();
      const steady = await paymentsThroughput(
        world,
        `${THROUGHPUT}: steady arrivals (${blocks})`,
        steadily,
        steadily.length,
        rpcLatencyMs,
        BLOCK_MS / halfABlock,
      );
      const inner = steady.byBlock.slice(1, -1);
      const perFullBlock = inner.length ? inner.reduce((sum, count) => sum + count, 0) / inner.length : steady.perBlock;
      const fullBlocks = {
        perBlock: Math.round(perFullBlock * 100) / 100,
        capacityUsed: steady.blockCapacity ? Math.round((perFullBlock / steady.blockCapacity) * 1000) / 1000 : 0,
      };
      results.push({
        ...steady,
        fullBlocks,
        target: `≥ ${TARGET_MANY_SHARE * 100} % of a block's capacity in the blocks wholly inside the sending, p50 ≤ ${TARGET_P50_MS} ms`,
        met: fullBlocks.capacityUsed >= TARGET_MANY_SHARE && steady.p50 <= TARGET_P50_MS && steady.refused === 0,
      });
      await settled(chain);
    }
    return results;
  } finally {
    watch.stop();
    await app.stop();
    await proxy.stop();
    await chain.stop();
  }
}

/**
 * The node's own ceiling for a scenario's transactions: the chain taken back to `snapshot` (before the scenario), then
 * those of `raws` it had mined sent again straight to the node, in nonce order, eight at a time, as fast as it takes
 * them; how many it mines a block. The same transactions mined again leave the chain as the scenario left it.
 */
async function nodeCeiling(chain: LocalChain, snapshot: Hex, raws: Hex[]): Promise<Throughput["node"]> {
  const mined = (
    await Promise.all(
      raws.map(async (raw) => ((await chain.client.getTransactionReceipt({ hash: keccak256(raw) }).catch(() => null)) ? [raw] : [])),
    )
  ).flat();
  if (!(await chain.client.request({ method: "evm_revert" as never, params: [snapshot] as never }))) throw new Error("evm_revert failed");
  const queue = mined
    .map((raw) => ({ raw, nonce: parseTransaction(raw).nonce ?? 0 }))
    .sort((a, b) => a.nonce - b.nonce)
    .map(({ raw }) => raw);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let raw = queue.shift(); raw; raw = queue.shift())
        await chain.client.request({ method: "eth_sendRawTransaction", params: [raw] });
    }),
  );
  await settled(chain);
  const { byBlock } = blocksHolding(
    await Promise.all(mined.map(async (raw) => (await chain.client.getTransactionReceipt({ hash: keccak256(raw) })).blockNumber)),
  );
  return {
    perBlock: byBlock.length ? Math.round((mined.length / byBlock.length) * 100) / 100 : 0,
    mostInABlock: Math.max(0, ...byBlock),
    byBlock,
  };
}

/** Waits until the node's mempool is empty (every transaction sent mined), then for one more block. */
async function settled(chain: LocalChain) {
  for (;;) {
    const pending = (await chain.client.request({ method: "eth_getBlockByNumber", params: ["pending", false] })) as {
      transactions: unknown[];
    } | null;
    if (!pending?.transactions.length) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await new Promise((resolve) => setTimeout(resolve, BLOCK_MS));
}

function printedThroughput(rows: Throughput[]) {
  if (!rows.length) return;
  console.log(`\npayments on ${BLOCK_MS / 1000}-second blocks (${rows[0].database}): tools/call send_transaction from an allowance`);
  console.log(
    `${"scenario".padEnd(60)}   sent landed pend. refused   pay/s  a block (max)  capacity used  p50 ms  p95 ms  max ms  RPC/payment`,
  );
  for (const r of rows) {
    const perBlock = `${r.perBlock} (${r.mostInABlock})`;
    const share = `${Math.round(r.capacityUsed * 1000) / 10} % (${Math.round(r.mostCapacityUsed * 1000) / 10})`;
    console.log(
      `${r.scenario.padEnd(60)} ${String(r.sent).padStart(6)} ${String(r.landed).padStart(6)} ${String(r.pending).padStart(5)} ` +
        `${String(r.refused).padStart(7)} ${String(r.paymentsPerSecond).padStart(7)} ${perBlock.padStart(14)} ${share.padStart(14)} ` +
        `${String(r.p50).padStart(7)} ${String(r.p95).padStart(7)} ${String(r.max).padStart(7)} ${String(r.rpcPerPayment).padStart(12)}`,
    );
    const methods = Object.entries(r.rpcByMethod)
      .sort(([, a], [, b]) => b - a)
      .map(([method, count]) => `${method} ${Math.round((count / Math.max(1, r.landed)) * 10) / 10}`)
      .join(", ");
    console.log(`  ↳ RPC a payment: ${methods || "none"} (${r.rpcCalls} calls)`);
    console.log(
      `  ↳ p50 to the node ${r.toBroadcastP50} ms, then to its block ${r.toBlockP50} ms, then to the answer ${r.toAnswerP50} ms ` +
        `(in blocks: ${r.blocksToLandP50} after its call); ` +
        `${r.gasPerPayment} gas a payment, ${r.blockCapacity} to a block; server CPU ${r.cpuMsPerPayment} ms a payment; ` +
        `a block each: ${r.byBlock.join(" ")}`,
    );
    if (r.node)
      console.log(
        `  ↳ the node's ceiling: the same transactions sent straight to it, ${r.node.perBlock} a block (most ${r.node.mostInABlock}): ` +
          `${r.node.byBlock.join(" ")}`,
      );
    if (r.fullBlocks)
      console.log(
        `  ↳ the blocks wholly inside the sending: ${r.fullBlocks.perBlock} a block, ` +
          `${Math.round(r.fullBlocks.capacityUsed * 1000) / 10} % of its capacity`,
      );
    for (const [words, count] of Object.entries(r.refusals)) console.log(`  ↳ refused ${count}×: ${words}`);
    console.log(`  ↳ target ${r.target}: ${r.met ? "met" : "not met"}`);
  }
}

const bursts: Burst[] = [];

const BENCH_LIMITS = [
  "RATE_LIMIT_MCP_PER_IP",
  "RATE_LIMIT_MCP_PER_CLIENT",
  "RATE_LIMIT_OAUTH_PER_IP",
  "RATE_LIMIT_OAUTH_PER_CLIENT",
  "RATE_LIMIT_ACCOUNT_PER_IP",
  "RATE_LIMIT_APPROVALS_PER_PERSON",
];

/**
 * Limits far above the load, so every request still runs the limiter (same batching as the defaults) and none is
 * refused. The payments are far more than one person's daily gas budget. Every request created waits for the person:
 * the approval scenario's agent asks for thousands.
 */
const GENEROUS_SETTINGS = {
  ALLOWANCE_GAS_BUDGET: "1000000000",
  ...Object.fromEntries(BENCH_LIMITS.map((name) => [name, "1000000/1m"])),
  PENDING_REQUESTS_PER_CREDENTIAL: "1000000",
};

/** Codes of one client's grant (staying connected) as the consent screen mints them, for the code exchange scenario. */
async function mintedCodes(grant: { clientId: string; grantId: string; redirectUri: string }, count: number) {
  const { verifier, challenge } = pkcePair();
  const now = new Date();
  const codes = Array.from({ length: count }, () => randomSecret(32));
  for (let start = 0; start < count; start += 1000) {
    await db().authorizationCode.createMany({
      data: codes.slice(start, start + 1000).map((code) => ({
        codeHash: sha256Hex(code),
        grantId: grant.grantId,
        clientId: grant.clientId,
        redirectUri: grant.redirectUri,
        codeChallenge: challenge,
        scope: "mcp offline_access",
        createdAt: now,
        expiresAt: new Date(now.getTime() + 5 * 60_000),
      })),
    });
  }
  return codes.map((code) => ({ code, verifier }));
}

/** How many approvals the approval scenario posts: each is a request asked for over /mcp and a passkey assertion. */
const APPROVALS = 2000;
/** How many it posts before, unmeasured, as the other scenarios warm up (the route's modules load, V8 compiles). */
const WARM_UP_APPROVALS = 3000;
/** How many codes the code exchange scenario spends, measured; and how many before, unmeasured. */
const CODES = 3000;
const WARM_UP_CODES = 5000;
/** The burst: this many agents (API keys of one person) each ask for a signature at once. */
const BURST_AGENTS = 200;

type Burst = {
  agents: number;
  answered: number;
  distinct: number;
  pendingInDb: number;
  burstMs: number;
  /** the first load of /approvals, then the median and slowest of the next five */
  pageFirstMs: number;
  pageMedianMs: number;
  pageMaxMs: number;
  peakRssMb: number;
};

/**
 * 200 agents each create a request at the same moment; then the person opens /approvals (server-rendered) with the
 * 200 waiting. Every request must be answered, with its own id, and stored once. Half ask for a message, half for an
 * EIP-2612 permit of a token on the local chain to one of four spenders, two of them contracts: the queue's risk
 * chips read which spenders have code.
 */
async function burst(app: RunningApp, chain: LocalChain): Promise<Burst> {
  const holder = await keyHolder(app, `burst-${Date.now()}@bench.test`);
  const owner = (await deployer(chain)).account.address;
  const token = await deployErc20(chain, { name: "Burst Token", symbol: "BST", supply: parseEther("1000"), holder: owner });
  const spenders = [token, await deployErc20(chain, { name: "Spender", symbol: "SPD", supply: 1n, holder: owner })];
  spenders.push(privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address);
  const permit = (index: number) =>
    eip2612Permit({
      token,
      tokenName: "Burst Token",
      chainId: chain.chainId,
      owner: holder.signer.address,
      spender: spenders[index % 4],
      value: String(parseEther("5")),
      nonce: String(index),
    });
  const keys: string[] = [];
  for (let index = 0; index < BURST_AGENTS; index++) keys.push(await apiKeyFor(holder.person.userId, holder.credentialId, "approve"));
  let peak = rssMb(app.pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(app.pid))), 50);
  const started = performance.now();
  const answers = await Promise.all(
    keys.map(async (key, index) => {
      const response = await mcp(app, key, "tools/call", {
        name: index % 2 ? "sign_typed_data" : "sign_message",
        arguments: { credential_id: holder.credentialId, ...(index % 2 ? { typed_data: permit(index) } : { message: "burst" }) },
      });
      const reply = (await response.json()) as { result?: { structuredContent?: { request_id?: string } } };
      return reply.result?.structuredContent?.request_id;
    }),
  );
  const burstMs = Math.round(performance.now() - started);
  const ids = answers.filter((id): id is string => Boolean(id));
  const pendingInDb = await db().agentRequest.count({ where: { userId: holder.person.userId, status: "pending" } });
  const load = async () => {
    const begun = performance.now();
    const response = await holder.person.session.request("/approvals", { method: "GET" });
    await response.text();
    if (response.status !== 200) throw new Error(`/approvals answered ${response.status}`);
    return performance.now() - begun;
  };
  const pageFirstMs = Math.round(await load());
  const times: number[] = [];
  for (let index = 0; index < 5; index++) times.push(await load());
  clearInterval(sampler);
  times.sort((a, b) => a - b);
  return {
    agents: BURST_AGENTS,
    answered: ids.length,
    distinct: new Set(ids).size,
    pendingInDb,
    burstMs,
    pageFirstMs,
    pageMedianMs: Math.round(times[2]),
    pageMaxMs: Math.round(times[4]),
    peakRssMb: Math.round(peak),
  };
}

/** The relayers of payments the throughput scenarios' chain has (ALLOWANCE_RELAYERS). */
const THROUGHPUT_RELAYERS = 8;

async function run(scale: number): Promise<Result[]> {
  const chain = await startChain();
  const framework = await deployFramework(chain);
  const profileDir = process.env.BENCH_PROFILE;
  const app = await startApp({
    database: values.postgres ? "postgres" : "sqlite",
    nextStart: values["next-start"],
    env: {
      CHAINS: chainsSetting(chain),
      ALLOWANCE_FRAMEWORKS: frameworksSetting(chain, framework),
      ALLOWANCE_RELAYERS: relayersSetting(chain),
      ...GENEROUS_SETTINGS,
      BENCH_TIMING_FILE: TIMING_FILE,
    },
    nodeArgs: [
      ...TIMING_IMPORT,
      ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
      ...(process.env.BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
    ],
  });
  const peer = await startPeer(app);
  try {
    await seed(scale);
    let watchId = "";
    let signerId = "";
    const { tokens, user } = await obtainTokens(app, {
      credentials: async (userId) => {
        watchId = (await createWatchCredential(userId, "Bench")).id;
        signerId = (
          await db().credential.create({
            data: { id: randomId("cr_"), userId, name: "Signer", kind: "evm", address: `0x${"cd".repeat(20)}` },
          })
        ).id;
        return [
          { credentialId: watchId, mode: "read" },
          { credentialId: signerId, mode: "approve" },
        ];
      },
    });
    const apiKey = await apiKeyFor(user.id, watchId);
    // The read again with a DPoP-bound token of the same grant set: each call with a new proof.
    const proof = dpopProofs();
    const { tokens: bound } = await obtainTokens(app, {
      credentials: async (userId) => [
        { credentialId: (await createWatchCredential(userId, "Bench")).id, mode: "read" },
        {
          credentialId: (
            await db().credential.create({
              data: { id: randomId("cr_"), userId, name: "Signer", kind: "evm", address: `0x${"ce".repeat(20)}` },
            })
          ).id,
          mode: "approve",
        },
      ],
      dpop: () => proof(`${app.baseUrl}/oauth/token`),
    });
    // Request creation is measured as agents make requests under the default limit of requests waiting
    // (PENDING_REQUESTS_PER_CREDENTIAL, 50): one agent with thousands waiting, which that limit refuses, made every
    // creation count them all (an index range that grew through the run, about 0.3 ms of SQLite's CPU at 6,000).
    const creators: string[] = [];
    let created = 0;
    const creatorCount = Math.ceil((MAX_CREATIONS_A_SECOND * (DURATION + WARM_UP_SECONDS)) / DEFAULT_WAITING_LIMIT);
    for (let index = 0; index < creatorCount; index++) creators.push(await apiKeyFor(user.id, signerId, "approve"));
    await createUser();
    // Refresh chains in a pool, each request taking one and putting it back rotated: three per connection, so the
    // chains whose calls the warm-up cuts off (dropped, never sent again) leave one for every connection.
    const refreshChains: RefreshChain[] = [];
    for (let index = 0; index < 3 * CONNECTIONS; index++) {
      const { client, tokens: issued } = await obtainTokens(app);
      refreshChains.push({ clientId: client.client_id, token: issued.refresh_token! });
    }
    const mcpHeaders = (bearer: string) => ({
      Authorization: `Bearer ${bearer}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-06-18",
    });
    const mcpUrl = `${app.baseUrl}/mcp`;
    // Code exchange: one client that stays connected; its codes are minted just before the scenario.
    const exchanging = await obtainTokens(app);
    const codes: { code: string; verifier: string }[] = [];
    // Approval: a person whose wallet key this process holds, asked over /mcp; each approval prepared as the
    // person's browser would (options, passkey assertion, signature) just before the scenario, then only posted.
    const approver = await keyHolder(app, `approver-${Date.now()}@bench.test`);
    const approvals: { path: string; body: string }[] = [];
    const scenarios: Scenario[] = [
      { name: "GET discovery", url: `${app.baseUrl}/.well-known/oauth-protected-resource`, method: "GET", pid: app.pid },
      { name: "POST /mcp without token (401)", url: mcpUrl, body: mcpBody("tools/list"), pid: app.pid },
      { name: "/mcp tools/list", url: mcpUrl, headers: mcpHeaders(tokens.access_token), body: mcpBody("tools/list"), pid: app.pid },
      {
        name: READ,
        url: mcpUrl,
        headers: mcpHeaders(tokens.access_token),
        body: toolCall("list_credentials"),
        pid: app.pid,
        halfLoad: true,
      },
      {
        name: "/mcp list_credentials (DPoP)",
        url: mcpUrl,
        body: toolCall("list_credentials"),
        pid: app.pid,
        stateless: true,
        requests: [
          {
            method: "POST",
            setupRequest: (request) => ({
              ...request,
              headers: { ...mcpHeaders(""), Authorization: `DPoP ${bound.access_token}`, DPoP: proof(mcpUrl, bound.access_token) },
            }),
          },
        ],
      },
      {
        name: "/mcp list_credentials (2026-07-28)",
        url: mcpUrl,
        headers: {
          ...mcpHeaders(tokens.access_token),
          "MCP-Protocol-Version": "2026-07-28",
          "Mcp-Method": "tools/call",
          "Mcp-Name": "list_credentials",
        },
        body: modernToolCall("list_credentials"),
        pid: app.pid,
      },
      {
        name: "/mcp list_credentials (API key)",
        url: mcpUrl,
        headers: mcpHeaders(apiKey),
        body: toolCall("list_credentials"),
        pid: app.pid,
      },
      {
        name: "peer list_credentials (JWT)",
        url: peer.url,
        headers: mcpHeaders(tokens.access_token),
        body: toolCall("list_credentials"),
        pid: peer.pid,
        halfLoad: true,
      },
      {
        name: "/mcp get_balance (local chain)",
        url: mcpUrl,
        headers: mcpHeaders(tokens.access_token),
        body: toolCall("get_balance", { credential_id: watchId, chain_id: chain.chainId }),
        pid: app.pid,
      },
      {
        name: "/mcp sign_message (creates a request)",
        url: mcpUrl,
        headers: mcpHeaders(creators[0]),
        body: toolCall("sign_message", { credential_id: signerId, message: "bench" }),
        pid: app.pid,
        stateless: true,
        // Each call as the next agent, in turn.
        requests: [
          { method: "POST", setupRequest: (request) => ({ ...request, headers: mcpHeaders(creators[created++ % creatorCount]) }) },
        ],
      },
      {
        name: "/oauth/token refresh rotation",
        url: `${app.baseUrl}/oauth/token`,
        pid: app.pid,
        stateless: true,
        requests: [
          {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
            // autocannon resets a connection's context after each request: the chains wait in a pool instead,
            // each taken by one request and put back with its rotated token.
            setupRequest: (request, context) => {
              const chain = Object.assign(context, refreshChains.shift()!) as RefreshChain;
              const form = { grant_type: "refresh_token", client_id: chain.clientId, refresh_token: chain.token };
              return { ...request, body: new URLSearchParams(form).toString() };
            },
            onResponse: (status, body, context) => {
              const { clientId } = context as RefreshChain;
              if (status === 200) refreshChains.push({ clientId, token: (JSON.parse(body) as { refresh_token: string }).refresh_token });
            },
          },
        ],
      },
      {
        name: "/oauth/token code exchange",
        url: `${app.baseUrl}/oauth/token`,
        pid: app.pid,
        amount: CODES,
        warmUpAmount: WARM_UP_CODES,
        prepare: async () => {
          const grant = await db().grant.findUniqueOrThrow({ where: { id: exchanging.grantId } });
          const client = { clientId: grant.clientId, grantId: grant.id, redirectUri: exchanging.client.redirect_uris[0] };
          codes.push(...(await mintedCodes(client, WARM_UP_CODES + CODES)));
        },
        requests: [
          {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
            setupRequest: (request) => {
              const { code, verifier } = codes.shift() ?? { code: "spent", verifier: "" };
              const form = {
                grant_type: "authorization_code",
                client_id: exchanging.client.client_id,
                code,
                redirect_uri: exchanging.client.redirect_uris[0],
                code_verifier: verifier,
              };
              return { ...request, body: new URLSearchParams(form).toString() };
            },
          },
        ],
      },
      {
        name: "/api/approvals/{id}/approve",
        url: app.appUrl,
        pid: app.pid,
        amount: APPROVALS,
        warmUpAmount: WARM_UP_APPROVALS,
        prepare: async () => {
          // As a synced passkey (iCloud Keychain, Google Password Manager): its signature counter stays 0, so approvals
          // posted 16 at a time may arrive in any order (an incrementing counter refuses one that arrives late).
          await db().passkey.updateMany({ where: { userId: approver.person.userId }, data: { counter: 0 } });
          for (let index = 0; index < WARM_UP_APPROVALS + APPROVALS; index++) {
            approver.person.passkey.counter = -1;
            const { requestId } = await approver.ask("sign_message", { message: `bench ${index}` });
            const { path, approval } = await approver.prepareApproval(requestId!);
            approvals.push({ path, body: JSON.stringify(approval) });
          }
        },
        requests: [
          {
            method: "POST",
            setupRequest: (request) => {
              const { path, body } = approvals.shift() ?? { path: "/api/approvals/none/approve", body: "{}" };
              return {
                ...request,
                path,
                body,
                headers: { ...approver.person.session.browserHeaders(), "Content-Type": "application/json" },
              };
            },
          },
        ],
      },
    ];
    const wanted = values.only?.split(",");
    const chosen = scenarios.filter(
      (scenario) => !wanted || scenario.name.startsWith("peer") || wanted.some((part) => scenario.name.includes(part)),
    );
    const results: Result[] = [];
    for (const scenario of chosen) {
      const [full] = await measure(scenario, scale);
      results.push(full);
      if (scenario.halfLoad) results.push(...(await measure(scenario, scale, Math.max(1, Math.round(full.rps / 2)))));
    }
    // The yardstick the payments are counted in, measured beside them; warmed first when it did not run already.
    let readWarm = chosen.some((scenario) => scenario.name === READ);
    const read = async () => {
      const measured = await saturated(
        scenarios.find((scenario) => scenario.name === READ)!,
        !readWarm,
      );
      readWarm = true;
      return measured;
    };
    const payments: PaymentBench = { app, chain, scale, headers: mcpHeaders(""), read };
    if (!wanted || wanted.some((part) => ALLOWANCE_SPEND.includes(part))) results.push(await allowanceSpends(payments));
    if (!wanted || wanted.some((part) => X402_PAYMENT.includes(part))) results.push(await x402Payments(payments));
    if (!wanted || wanted.some((part) => STOCK_MERCHANT.includes(part))) results.push(await stockMerchantPayments(payments));
    if (!wanted || wanted.some((part) => STOCK_MERCHANT_FLOAT.includes(part)))
      results.push(await stockMerchantPayments(payments, STOCK_FLOAT));
    if (!wanted || wanted.some((part) => "burst".includes(part))) bursts.push(await burst(app, chain));
    return results;
  } finally {
    peer.stop();
    await app.stop();
    await chain.stop();
    fs.rmSync(TIMING_FILE, { force: true });
  }
}

/** One scale in this process; several scales each in a fresh process (settings and the database client are per process). */
async function runScales(): Promise<Result[]> {
  if (SCALES.length === 1) return printed(SCALES[0], await run(SCALES[0]));
  const all: Result[] = [];
  const tsx = createRequire(import.meta.url).resolve("tsx/cli");
  for (const scale of SCALES) {
    const flags = ["--scale", String(scale), "--duration", String(DURATION), "--connections", String(CONNECTIONS), "--part", "main"];
    if (values.only) flags.push("--only", values.only);
    if (values["next-start"]) flags.push("--next-start");
    const child = spawnSync(process.execPath, [tsx, "scripts/bench.ts", ...flags, ...(values.postgres ? ["--postgres"] : [])], {
      stdio: "inherit",
    });
    if (child.status !== 0) throw new Error(`the run at scale ${scale} failed`);
    all.push(...(JSON.parse(fs.readFileSync(RESULTS, "utf8")) as { results: Result[] }).results);
  }
  return all;
}

function printed(scale: number, results: Result[]): Result[] {
  console.log(`\nscale ${scale}× (${PEOPLE * scale} people), ${CONNECTIONS} connections, ${DURATION} s a scenario`);
  const peer = results.find((result) => result.scenario.startsWith("peer"))!.rps;
  console.log("scenario                                  req/s   p50 ms   p99 ms   max ms  errors  CPU µs/req  peak RSS MB  vs peer");
  for (const r of results) {
    // A run held at a fixed rate measures latency; its throughput says nothing against the peer's.
    const ratio = r.rate ? "–" : `${(r.rps / peer).toFixed(2)}×`;
    const name = r.inServer ? "  ↳ the same, in the server" : r.scenario;
    console.log(
      `${name.padEnd(40)} ${String(r.rps).padStart(6)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(8)} ` +
        `${String(r.max).padStart(8)} ${String(r.errors).padStart(7)} ${(r.inServer ? "" : String(r.cpuUsPerRequest)).padStart(11)} ` +
        `${String(r.peakRssMb).padStart(12)}   ${ratio}`,
    );
    if (r.inReads) console.log(`  ↳ ${r.inReads} reads (a read beside it: ${r.readCpuUs} µs)`);
    if (r.gasPerPayment) {
      const { funding, settlement } = r.gasPerPayment;
      console.log(`  ↳ gas a payment: funding ${funding} + settlement ${settlement} = ${funding + settlement}`);
    }
  }
  console.log(
    `peak RSS of the server over the run: ${Math.max(...results.filter((r) => !r.scenario.startsWith("peer")).map((r) => r.peakRssMb))} MB`,
  );
  for (const b of bursts) {
    const answered = `${b.answered} answered (${b.distinct} distinct requests, ${b.pendingInDb} pending in the database)`;
    const page = `loaded first in ${b.pageFirstMs} ms, then median ${b.pageMedianMs} ms, slowest ${b.pageMaxMs} ms`;
    console.log(
      `burst: ${b.agents} agents, ${answered} in ${b.burstMs} ms; /approvals with them waiting: ${page}; peak RSS ${b.peakRssMb} MB`,
    );
  }
  return results;
}

/**
 * The throughput scenarios, when chosen: in this process when it runs nothing else on one node (settings and the
 * database client are per process, and theirs are a chain of their own behind the proxy), else in a fresh process for
 * each node.
 */
async function runThroughputs(mainRan: boolean): Promise<Throughput[]> {
  const latencies = values["rpc-latency"].split(",").map(Number);
  const nodes = values["chain-node"].split(",") as ChainNode[];
  if (!mainRan && nodes.length === 1) {
    const rows = await throughputs(values.postgres ? "postgres" : "sqlite", latencies, nodes[0]);
    printedThroughput(rows);
    return rows;
  }
  const tsx = createRequire(import.meta.url).resolve("tsx/cli");
  const rows: Throughput[] = [];
  for (const node of nodes) {
    const flags = ["--part", THROUGHPUT, "--rpc-latency", values["rpc-latency"], "--chain-node", node];
    const child = spawnSync(process.execPath, [tsx, "scripts/bench.ts", ...flags, ...(values.postgres ? ["--postgres"] : [])], {
      stdio: "inherit",
    });
    if (child.status !== 0) throw new Error(`the throughput run on ${node} failed`);
    rows.push(...(JSON.parse(fs.readFileSync(RESULTS, "utf8")) as { throughput: Throughput[] }).throughput);
  }
  return rows;
}

const RESULTS = "bench/results/latest.json";
const wantedParts = values.only?.split(",");
const mainWanted = values.part !== THROUGHPUT && (!wantedParts || wantedParts.some((part) => !THROUGHPUT.includes(part)));
const throughputWanted = values.part !== "main" && (!wantedParts || wantedParts.some((part) => THROUGHPUT.includes(part)));
const results = mainWanted ? await runScales() : [];
const throughput = throughputWanted ? await runThroughputs(mainWanted) : [];
fs.mkdirSync("bench/results", { recursive: true });
const machine = { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version };
const report = {
  at: new Date().toISOString(),
  database: values.postgres ? "postgresql" : "sqlite",
  machine,
  connections: CONNECTIONS,
  durationSeconds: DURATION,
  results,
  bursts,
  throughput,
};
fs.writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nwritten to ${RESULTS}`);
