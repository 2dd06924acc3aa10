// The official MCP conformance suite (@modelcontextprotocol/conformance) against the started app: its
// server scenarios on /mcp with a bearer, and its authorization-server scenarios on the OAuth endpoints.
// It runs on the tests' own Node (24: it needs 22 or later). Each applicable scenario is named
// below, and each of its checks must pass: a scenario that is skipped, missing or silent fails the test.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { freePort, startApp, type RunningApp } from "../support/app";
import { approve, createUser, createWatchCredential, obtainTokens, register } from "../support/oauth";

const require = createRequire(import.meta.url);
const SUITE = require.resolve("@modelcontextprotocol/conformance/dist/index.js");
/** The 2025-era revision /mcp serves beside 2026-07-28; the suite runs each scenario at that revision's wire. */
const SPEC_VERSION = "2025-11-25";

/**
 * The server scenarios that apply to a wallet server, with the checks each must pass.
 *
 * Left out, because they do not apply:
 * - tools-call-error, tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -with-logging,
 *   -with-progress, -sampling, -elicitation, elicitation-sep1034-defaults, elicitation-sep1330-enums,
 *   json-schema-2020-12: they call fixture tools of the suite's reference server (test_simple_text, …)
 *   that a wallet does not have. (tools-call-simple-text even "passes" on the "tool not found" result,
 *   which would prove nothing.) Progress notifications of our own tools are tested in e2e/browser/requests.test.ts.
 * - resources-*, prompts-*, completion-complete, logging-set-level: the server offers none of these
 *   capabilities and does not declare them (logging/setLevel answers "Method not found", as it must).
 * - server-session-lifecycle, server-sse-polling, server-sse-multiple-streams: about sessions and SSE
 *   streams; /mcp is stateless Streamable HTTP with JSON responses (the suite itself reports them as
 *   not applicable to a stateless server, with no check run).
 * - The 2026-07-28 scenarios run at their own revision below.
 * - tasks-*: the tasks extension runs at 2026-07-28 below (TASKS_SCENARIOS).
 * - sep-2640-*: an extension the server does not offer.
 */
const SERVER_SCENARIOS: Record<string, string[]> = {
  "server-initialize": ["server-initialize", "wire-schema-valid"],
  ping: ["ping", "wire-schema-valid"],
  "tools-list": ["tools-list", "tools-name-format", "wire-schema-valid"],
  "dns-rebinding-protection": ["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"],
};

/**
 * The 2026-07-28 scenarios that apply (/mcp serves that revision with the MCP SDK v2, docs/decisions/0008).
 * Left out: input-required-result-* other than unsupported-methods, http-custom-header-server-validation,
 * sep-2164-resource-not-found and the tools-call-* fixtures — they call the suite's diagnostic tools or
 * resources, which a wallet does not have. Our own input_required approvals are tested in
 * e2e/mcp/modern-clients.test.ts and e2e/browser/elicited-approval.test.ts.
 */
const MODERN_SCENARIOS: Record<string, string[]> = {
  "server-stateless": [
    "sep-2575-server-implements-discover",
    "sep-2575-discover-capabilities-match-handlers",
    "sep-2575-request-meta-invalid-missing-meta",
    "sep-2575-http-server-unsupported-version-400",
    "sep-2575-http-server-header-mismatch-400",
    "sep-2575-server-identifies-in-result-meta",
  ],
  "tools-list": ["tools-list", "tools-name-format", "tools-list-deterministic-order", "wire-schema-valid"],
  "dns-rebinding-protection": ["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"],
  caching: ["sep-2549-tools-list-caching-hints", "sep-2549-cache-scope-valid", "sep-2549-ttl-non-negative"],
  "http-header-validation": [
    "sep-2243-server-reject-invalid-headers",
    "sep-2243-server-reject-error-code",
    "sep-2243-header-name-case-insensitive",
  ],
  "input-required-result-unsupported-methods": ["sep-2322-not-on-unsupported-requests"],
};

/**
 * The tasks extension (SEP-2663, docs/decisions/0010), whose scenarios the suite lists as [extension] and runs
 * only when forced. Most of their checks create tasks with the suite's fixture tools (slow_compute, failing_job,
 * greet, …): those are named in NOT_APPLICABLE_CHECKS; what applies without them is the advertisement, the
 * gating of tasks/* on the declared extension, the routing headers, the removed methods and unknown task ids.
 * Left out: tasks-wire-fields, tasks-request-state-removal, tasks-lifecycle, tasks-required-task-error,
 * tasks-mrtr-*, tasks-status-notifications — every check of theirs needs a fixture tool. Our own tasks are
 * tested in e2e/mcp/tasks.test.ts and e2e/browser/task-approval.test.ts.
 */
const TASKS_SCENARIOS: Record<string, string[]> = {
  "tasks-capability-negotiation": ["tasks-extension-advertised", "sep-2663-tasks-methods-non-declaring", "wire-schema-valid"],
  "tasks-request-headers": ["tasks-headers-reject-mismatched-method", "wire-schema-valid"],
  "tasks-dispatch-and-envelope": [
    "sep-2663-tasks-result-removed-method-not-found",
    "tasks-removed-tasks-list",
    "sep-2663-tasks-get-invalid-task-id-32602",
    "wire-schema-valid",
  ],
};

/**
 * Checks inside an applicable scenario that cannot apply to a wallet server; each is still reported by the
 * suite, and any check not named here must pass.
 */
const NOT_APPLICABLE_CHECKS = new Set([
  // They need the suite's diagnostic tools (test_missing_capability, test_streaming_elicitation, test_logging_tool).
  "sep-2575-server-rejects-undeclared-capability",
  "sep-2575-missing-capability-http-400",
  "sep-2575-http-server-no-independent-requests-on-stream",
  "sep-2575-server-no-log-without-loglevel",
  // The server offers no prompts or resources, so there are no lists of them to give caching hints for.
  "sep-2549-prompts-list-caching-hints",
  "sep-2549-resources-list-caching-hints",
  "sep-2549-resources-templates-list-caching-hints",
  "sep-2549-resources-read-caching-hints",
  "sep-2575-server-sends-prompts-list-changed-on-subscription",
  // The tasks extension's checks that create a task with a fixture tool (slow_compute, failing_job, greet).
  "sep-2663-server-rejects-undeclared-client",
  "tasks-per-request-meta-opt-in",
  "tasks-headers-tolerate-mcp-method-on-tools-call",
  "sep-2663-routing-headers-accepted-on-tasks-get",
  "sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get",
  "tasks-server-directed-creation-no-hint",
  "sep-2663-legacy-task-param-ignored",
  "tasks-immediate-result-shortcut",
  "tasks-result-type-complete-on-non-task-responses",
  "sep-2663-durable-create-strong-consistency",
]);

const AUTHORIZATION_SCENARIOS: Record<string, string[]> = {
  "authorization-server-metadata-endpoint": ["authorization-server-metadata", "authorization-server-metadata-cimd"],
  "authorization-code-grant": ["authorization-code-grant"],
};

/** Warnings the suite may give, each for a SHOULD the server knowingly does not follow: none. Any warning fails. */
const ALLOWED_WARNINGS = new Set<string>();

type Check = { id: string; status: string; errorMessage?: string };
type Run = { code: number | null; output: string; checks: Check[] };

/** Runs the suite's CLI; `onOutput` sees its output as it comes. */
function runSuite(args: string[], onOutput?: (output: string) => void): Promise<Run> {
  const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-conformance-"));
  const child = spawn(process.execPath, [SUITE, ...args, "--output-dir", outputDir], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk;
    onOutput?.(output);
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  return new Promise((resolve) =>
    child.on("exit", (code) => {
      const checks = fs
        .readdirSync(outputDir, { recursive: true, encoding: "utf8" })
        .filter((file) => path.basename(file) === "checks.json")
        .flatMap((file) => JSON.parse(fs.readFileSync(path.join(outputDir, file), "utf8")) as Check[]);
      fs.rmSync(outputDir, { recursive: true, force: true });
      resolve({ code, output, checks });
    }),
  );
}

function assertPassed(scenario: string, expected: string[], run: Run) {
  const failed = run.checks.filter(
    (check) =>
      !NOT_APPLICABLE_CHECKS.has(check.id) &&
      (check.status === "FAILURE" || (check.status === "WARNING" && !ALLOWED_WARNINGS.has(check.id))),
  );
  assert.deepEqual(failed, [], `${scenario}: checks that did not pass\n${run.output}`);
  const ran = run.checks.map((check) => `${check.id} ${check.status}`).join(", ");
  for (const id of expected) {
    assert.ok(
      run.checks.some((check) => check.id === id && check.status === "SUCCESS"),
      `${scenario}: check ${id} did not run and pass (checks: ${ran})\n${run.output}`,
    );
  }
  // The suite's exit code counts the not-applicable checks too; it must be 0 whenever none of them failed.
  const excused = run.checks.some((check) => NOT_APPLICABLE_CHECKS.has(check.id) && check.status === "FAILURE");
  if (!excused) assert.equal(run.code, 0, `${scenario}: the suite exited with ${run.code}\n${run.output}`);
}

/** Lets the suite reach /mcp with a bearer: it has no option for an Authorization header. */
async function bearerProxy(port: number, app: RunningApp, bearer: string) {
  const target = new URL(app.baseUrl);
  const server = http.createServer((request, response) => {
    // Everything else is passed on as it came, Host and Origin included, so the DNS-rebinding checks
    // see what the suite sent.
    const upstream = http.request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: request.method,
        path: request.url,
        headers: { ...request.headers, authorization: `Bearer ${bearer}` },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", () => response.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { url: `http://localhost:${port}/mcp`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("the official MCP conformance suite", { timeout: 110_000 }, () => {
  let app: RunningApp;
  let proxy: Awaited<ReturnType<typeof bearerProxy>>;

  before(async () => {
    const proxyPort = await freePort();
    // The suite reaches the server at the proxy's origin, so that is the origin a browser page would have.
    app = await startApp({ env: { MCP_ALLOWED_ORIGINS: `http://localhost:${proxyPort}` } });
    const { tokens } = await obtainTokens(app, {
      credentials: async (userId) => [{ credentialId: (await createWatchCredential(userId)).id, mode: "read" }],
    });
    proxy = await bearerProxy(proxyPort, app, tokens.access_token);
  });
  after(async () => {
    await proxy?.close();
    await app?.stop();
  });

  /** Runs each scenario at `specVersion`, two at a time (the machines have two cores), and checks each passed. */
  async function expectScenariosPass(scenarios: Record<string, string[]>, specVersion: string, options: string[] = []) {
    const entries = Object.entries(scenarios);
    const runs = new Map<string, Run>();
    for (let i = 0; i < entries.length; i += 2) {
      await Promise.all(
        entries.slice(i, i + 2).map(async ([scenario]) => {
          runs.set(
            scenario,
            await runSuite(["server", "--url", proxy.url, "--scenario", scenario, "--spec-version", specVersion, ...options]),
          );
        }),
      );
    }
    for (const [scenario, expected] of entries) assertPassed(scenario, expected, runs.get(scenario)!);
  }

  it(`passes every server scenario that applies to a wallet server (${SPEC_VERSION})`, () =>
    expectScenariosPass(SERVER_SCENARIOS, SPEC_VERSION));

  it("passes every 2026-07-28 server scenario that applies to a wallet server", () => expectScenariosPass(MODERN_SCENARIOS, "2026-07-28"));

  it("passes the checks of the tasks extension's scenarios that need no fixture tools", () =>
    expectScenariosPass(TASKS_SCENARIOS, "2026-07-28", ["--force"]));

  it("passes the authorization-server scenarios: metadata, and the authorization-code grant with PKCE", async () => {
    const port = await freePort();
    const client = await register(app, { client_name: "MCP conformance suite", redirect_uris: [`http://127.0.0.1:${port}/callback`] });
    const user = await createUser();
    const credential = await createWatchCredential(user.id);
    let approving: Promise<void> | undefined;
    const run = await runSuite(
      ["authorization", "--url", app.baseUrl, "--client-id", client.client_id, "--resource", `${app.baseUrl}/mcp`, "--port", String(port)],
      (output) => {
        // The suite prints the authorization URL for a person to open; the person approves on the
        // consent screen (here through the function that screen calls), and the browser follows the redirect.
        const url = output.match(/^(http\S+\/oauth\/authorize\?\S+)$/m)?.[1];
        if (!url || approving) return;
        approving = (async () => {
          const toConsent = await fetch(url, { redirect: "manual" });
          const requestId = new URL(toConsent.headers.get("location")!).searchParams.get("request");
          assert.ok(requestId, `authorize did not send the person to the consent screen: ${toConsent.status}`);
          const { redirect } = await approve(requestId, user.id, [{ credentialId: credential.id, mode: "read" }]);
          await fetch(redirect);
        })();
      },
    );
    assert.ok(approving, `the suite printed no authorization URL\n${run.output}`);
    await approving;
    for (const [scenario, expected] of Object.entries(AUTHORIZATION_SCENARIOS)) assertPassed(scenario, expected, run);
  });
});
