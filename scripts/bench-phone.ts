// npm run bench:phone: the app as a person sees it on a phone, against the production build (server.ts, as
// `npm start` runs it) in Chromium throttled as Lighthouse's mobile profile is: 4× slower CPU
// (Emulation.setCPUThrottlingRate), 150 ms round trip, 1.6 Mbps down and 750 kbps up (Network.emulateNetworkConditions),
// a 375×812 touch screen. Reports, as medians over --runs runs:
//   - approval link opened → Approve button usable, with an empty cache and with the app's files cached;
//   - the JavaScript each screen loads, compressed as served (and its size once decompressed).
// The methods and the latest figures are in docs/performance.md; bench/results/phone.json keeps the last run.
//   npm run bench:phone -- [--runs 7]
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { parseEther } from "viem";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startApp, type RunningApp } from "../e2e/support/app";
import { launchBrowser } from "../e2e/support/browser";
import { chainsSetting, startChain } from "../e2e/support/chain";
import { agentAsks, connectAgent, newPerson } from "../e2e/support/consent";
import { chromiumForTests } from "./test-chromium.mjs";

const { values } = parseArgs({ options: { runs: { type: "string", default: "7" } } });
const RUNS = Number(values.runs);

const PHONE = { viewport: { width: 375, height: 812 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true };
const NETWORK = { offline: false, latency: 150, downloadThroughput: 1_600_000 / 8, uploadThroughput: 750_000 / 8 };
const CPU_SLOWDOWN = 4;
const APPROVE = "Approve with passkey";

/**
 * Runs in the page before its own scripts: notes, on the page's clock (0 = navigation start), when the Approve button
 * is first usable — rendered with a size, not disabled (the page keeps it disabled until React has hydrated it), and
 * carrying React's click handler, so that a tap at that moment runs the approval.
 */
function watchForUsableApprove(name: string) {
  const timer = setInterval(() => {
    const button = [...document.querySelectorAll("button")].find((candidate) => candidate.textContent?.trim() === name);
    if (!button || button.disabled || button.getBoundingClientRect().height === 0) return;
    const props = Object.entries(button).find(([key]) => key.startsWith("__reactProps$"))?.[1] as { onClick?: unknown } | undefined;
    if (typeof props?.onClick !== "function") return;
    (window as unknown as { approveUsableAt: number }).approveUsableAt = performance.now();
    clearInterval(timer);
  }, 10);
}

async function throttle(context: BrowserContext, page: Page): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", NETWORK);
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: CPU_SLOWDOWN });
}

/** Milliseconds from opening `url` to a usable Approve button, in a throttled page of `context`. */
async function timeToApprove(context: BrowserContext, url: string): Promise<number> {
  const page = await context.newPage();
  try {
    await throttle(context, page);
    await page.addInitScript(watchForUsableApprove, APPROVE);
    await page.goto(url, { waitUntil: "commit" });
    const handle = await page.waitForFunction(() => (window as unknown as { approveUsableAt?: number }).approveUsableAt, null, {
      timeout: 60_000,
      polling: 100,
    });
    return Math.round((await handle.jsonValue()) as number);
  } finally {
    await page.close();
  }
}

type PageJs = {
  screen: string;
  /** the scripts the page's HTML names: what the screen needs before it works */
  scripts: number;
  compressedKb: number;
  decompressedKb: number;
  /** scripts fetched after (code loaded when the browser is idle, ahead of a tap) */
  laterKb: number;
  encodings: string[];
};

/**
 * The JavaScript a screen loads until the network is idle, as it came over the wire, split into what its HTML names
 * and what the page fetched after (a chunk loaded when the browser is idle, ahead of a tap).
 */
async function javascriptOf(context: BrowserContext, screen: string, open: (page: Page) => Promise<void>): Promise<PageJs> {
  const page = await context.newPage();
  let html = "";
  const scripts: Promise<{ url: string; compressed: number; decompressed: number; encoding: string }>[] = [];
  page.on("response", (response) => {
    const request = response.request();
    if (request.resourceType() === "document" && request.frame() === page.mainFrame()) {
      void response.text().then(
        (text) => (html = text),
        () => {},
      );
    }
    if (request.resourceType() !== "script") return;
    scripts.push(
      (async () => ({
        url: new URL(response.url()).pathname,
        compressed: (await request.sizes()).responseBodySize,
        decompressed: (await response.body()).length,
        encoding: (await response.headerValue("content-encoding")) ?? "identity",
      }))(),
    );
  });
  try {
    await open(page);
    await page.waitForLoadState("networkidle");
    const loaded = await Promise.all(scripts);
    const named = loaded.filter((script) => html.includes(script.url));
    const kb = (bytes: number) => Math.round(bytes / 102.4) / 10;
    const sum = (list: typeof loaded, size: "compressed" | "decompressed") => list.reduce((total, script) => total + script[size], 0);
    return {
      screen,
      scripts: named.length,
      compressedKb: kb(sum(named, "compressed")),
      decompressedKb: kb(sum(named, "decompressed")),
      laterKb: kb(sum(loaded, "compressed") - sum(named, "compressed")),
      encodings: [...new Set(named.map((script) => script.encoding))],
    };
  } finally {
    await page.close();
  }
}

function median(numbers: number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : Math.round((sorted[middle - 1] + sorted[middle]) / 2);
}

async function measure(app: RunningApp, browser: Browser, fund: (address: string, ether: string) => Promise<void>) {
  const person = await newPerson(browser, app, "phone@example.com");
  const { client } = await connectAgent(app, person.page, "Phone bench", [{ name: "Main", mode: "approve" }]);
  const { credentials } = (await client.callTool({ name: "list_credentials", arguments: {} })).structuredContent as {
    credentials: { id: string; address: string }[];
  };
  await fund(credentials[0].address, "10");
  /** A payment of 0.01 ETH waiting for the person: its approval link. */
  const pendingPayment = async () => {
    const asked = (await client.callTool({
      name: "send_transaction",
      arguments: {
        credential_id: credentials[0].id,
        chain_id: 31337,
        to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        value: String(parseEther("0.01")),
      },
    })) as unknown as { structuredContent: { approval_url: string } };
    return asked.structuredContent.approval_url;
  };

  const signedIn = await person.context.storageState();
  const cold: number[] = [];
  const warm: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // An empty cache: a new context each run, with the person's session cookie only.
    const fresh = await browser.newContext({ ...PHONE, storageState: signedIn });
    cold.push(await timeToApprove(fresh, await pendingPayment()));
    // The app's files cached by that first visit (a person who opened the app before), a new request.
    warm.push(await timeToApprove(fresh, await pendingPayment()));
    await fresh.close();
    console.log(`run ${run + 1}/${RUNS}: empty cache ${cold.at(-1)} ms, cached ${warm.at(-1)} ms`);
  }

  const approvalUrl = await pendingPayment();
  type Screen = { screen: string; who: "visitor" | "person"; open: (page: Page) => Promise<unknown> };
  const screens: Screen[] = [
    { screen: "/ (signed out)", who: "visitor", open: (page) => page.goto(app.appUrl) },
    { screen: "/approvals/[id] (signed out)", who: "visitor", open: (page) => page.goto(approvalUrl) },
    { screen: "/approvals/[id]", who: "person", open: (page) => page.goto(approvalUrl) },
    ...["/wallets", "/approvals", "/clients", "/connect", "/settings", "/audit", "/device", "/no-such-page"].map((screen): Screen => ({
      screen,
      who: "person",
      open: (page) => page.goto(`${app.appUrl}${screen}`),
    })),
    {
      screen: "/consent",
      who: "person",
      open: async (page) => (await agentAsks(app, page, "Phone bench consent")).callback.close(),
    },
  ];
  const javascript: PageJs[] = [];
  for (const { screen, who, open } of screens) {
    // Each in a context of its own, so that nothing comes from the cache.
    const context = await browser.newContext({ ...PHONE, storageState: who === "person" ? signedIn : undefined });
    javascript.push(await javascriptOf(context, screen, async (page) => void (await open(page))));
    await context.close();
  }
  await client.close();
  return { approveMs: { emptyCache: { median: median(cold), runs: cold }, cached: { median: median(warm), runs: warm } }, javascript };
}

const chromium = await chromiumForTests();
Object.assign(process.env, chromium.env, { CHROMIUM_PATH: chromium.executablePath });
const chain = await startChain();
const app = await startApp({ env: { CHAINS: chainsSetting(chain), PENDING_REQUESTS_PER_CREDENTIAL: "1000" } });
const browser = await launchBrowser();
try {
  const result = await measure(app, browser, chain.fund);
  console.log(
    `\nApproval link → usable Approve button (p50 of ${RUNS}; ${CPU_SLOWDOWN}× CPU, ${NETWORK.latency} ms RTT, 1.6 Mbps):` +
      `\n  empty cache ${result.approveMs.emptyCache.median} ms (${result.approveMs.emptyCache.runs.join(", ")})` +
      `\n  cached      ${result.approveMs.cached.median} ms (${result.approveMs.cached.runs.join(", ")})\n`,
  );
  console.log("screen                          scripts  compressed KB  decompressed KB  later KB  encoding");
  for (const row of result.javascript) {
    console.log(
      `${row.screen.padEnd(32)}${String(row.scripts).padStart(7)}${String(row.compressedKb).padStart(15)}` +
        `${String(row.decompressedKb).padStart(17)}${String(row.laterKb).padStart(10)}  ${row.encodings.join(", ")}`,
    );
  }
  fs.mkdirSync(path.resolve("bench/results"), { recursive: true });
  fs.writeFileSync(
    path.resolve("bench/results/phone.json"),
    JSON.stringify({ at: new Date().toISOString(), chromium: chromium.name, ...result }, null, 2),
  );
} finally {
  await browser.close();
  await app.stop();
  await chain.stop();
}
