// No host the operator did not configure: the Smart Accounts Kit sends usage telemetry to MetaMask unless
// DO_NOT_TRACK (or CI) is set. The server's allowance code never loads the kit (lib/allowances uses the framework's
// core and ABI packages), and what the browser will bundle of it carries no telemetry. The spend path's own
// connections are checked in allowances.test.ts; here, that the checks can see the kit when it does phone home.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { build } from "esbuild";

const ANALYTICS_HOST = "mm-sdk-analytics.api.cx.metamask.io";

async function browserBundle(contents: string): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: "ts" },
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
    alias: { "@": process.cwd() },
  });
  return result.outputFiles[0].text;
}

/** Whether this machine lets us give a process a network namespace of its own (root, or user namespaces). */
const ISOLATED = spawnSync("unshare", ["--net", "true"]).status === 0;

/**
 * The hosts a fresh Node process tries to contact while it creates one delegation with the kit, with `env` added. It
 * runs in a network namespace of its own with no way out (`unshare --net`), so whatever it tries never leaves this
 * machine, not even as a DNS query.
 */
function hostsContactedByTheKit(env: Record<string, string>): string[] {
  const script = `
    import { recordOutbound } from ${JSON.stringify(path.resolve("e2e/support/outbound.ts"))};
    const outbound = recordOutbound();
    const kit = await import("@metamask/smart-accounts-kit");
    const environment = kit.getSmartAccountsEnvironment(1);
    try {
      const scope = { type: "functionCall", targets: ["0x${"77".repeat(20)}"], selectors: ["0x12345678"] };
      kit.createDelegation({ environment, to: "0x${"55".repeat(20)}", from: "0x${"66".repeat(20)}", scope });
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 1500));
    console.log(JSON.stringify(outbound.hosts()));
    process.exit(0);
  `;
  const { CI: _ci, DO_NOT_TRACK: _dnt, ...base } = process.env;
  const child = spawnSync("unshare", ["--net", process.execPath, "--import", "tsx", "--input-type=module", "-e", script], {
    env: { ...base, ...env },
    encoding: "utf8",
  });
  const line = child.stdout.trim().split("\n").pop() ?? "";
  assert.ok(line.startsWith("["), `${child.stdout}\n${child.stderr}`);
  return JSON.parse(line) as string[];
}

describe("no telemetry", { timeout: 120_000 }, () => {
  it(
    "the checks see the kit phone home when nothing tells it not to, and nothing once DO_NOT_TRACK is set",
    { skip: !ISOLATED && "needs unshare --net" },
    () => {
      assert.deepEqual(hostsContactedByTheKit({}), [ANALYTICS_HOST]);
      assert.deepEqual(hostsContactedByTheKit({ DO_NOT_TRACK: "1" }), []);
    },
  );

  it("what the browser bundles of lib/allowances has no telemetry in it, where the kit's own bundle does", async () => {
    const ours = await browserBundle(`
      export * from "@/lib/allowances/caveats";
      export * from "@/lib/allowances/wording";
      export * from "@/lib/wallet/delegation-framework";
      export * from "@/lib/allowances/signing";
    `);
    assert.ok(ours.includes("NativeTokenPeriodTransferEnforcer"), "the bundle holds the allowance code");
    assert.ok(!ours.includes(ANALYTICS_HOST));
    assert.ok(!/https?:\/\/(?!localhost)[a-z0-9.-]+\.[a-z]{2,}/i.test(ours.replace(/\/\/.*$/gm, "")), "no host names at all in the code");
    const kit = await browserBundle(`export * from "@metamask/smart-accounts-kit";`);
    assert.ok(kit.includes(ANALYTICS_HOST));
  });
});
