// npm run bench: the cost of the /mcp hot path (bearer check, grant lookup, a
// read tool) against the cheapest route the app serves, under `next start` on
// loopback. Bounded in requests and time; prints requests per second and
// latency percentiles.
import { startApp } from "../e2e/support/app";
import { createUser, createWatchCredential, obtainTokens } from "../e2e/support/oauth";

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const MAX_SECONDS = 60;

async function measure(label: string, send: () => Promise<Response>) {
  // Warm up the route's code paths first.
  for (let i = 0; i < 50; i++) await (await send()).arrayBuffer();
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const deadline = started + MAX_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS && performance.now() < deadline) {
        next++;
        const t0 = performance.now();
        const response = await send();
        await response.arrayBuffer();
        if (!response.ok) failures++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(1);
  console.log(
    `${label.padEnd(34)} ${String(Math.round(latencies.length / seconds)).padStart(6)} req/s   p50 ${pct(50)} ms   p95 ${pct(95)} ms   p99 ${pct(99)} ms   ${failures} failed`,
  );
}

const app = await startApp();
try {
  const { tokens } = await obtainTokens(app, {
    credentials: async (userId) => [{ credentialId: (await createWatchCredential(userId, "Bench")).id, mode: "read" }],
  });
  await createUser(); // another person's data in the same tables
  const mcpHeaders = {
    Authorization: `Bearer ${tokens.access_token}`,
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
  };
  const listCredentials = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_credentials", arguments: {} } });
  console.log(`${CONCURRENCY} concurrent clients, up to ${REQUESTS} requests each measurement\n`);
  await measure("GET discovery (baseline)", () => fetch(`${app.baseUrl}/.well-known/oauth-protected-resource`));
  await measure("POST /mcp without token (401)", () => fetch(`${app.baseUrl}/mcp`, { method: "POST", body: "{}" }));
  await measure("POST /mcp tools/list", () =>
    fetch(`${app.baseUrl}/mcp`, { method: "POST", headers: mcpHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }) }),
  );
  await measure("POST /mcp list_credentials", () => fetch(`${app.baseUrl}/mcp`, { method: "POST", headers: mcpHeaders, body: listCredentials }));
} finally {
  await app.stop();
}
