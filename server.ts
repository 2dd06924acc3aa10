// The production server (`npm start`): Next.js for everything, except that once app/mcp/route.ts has been
// loaded, /mcp — the agents' hot path — goes from node:http straight to that route's handlers, past Next's
// routing layer, which cost more than the rest of a read call (docs/decisions/0011-mcp-beside-next.md).
import http from "node:http";
import path from "node:path";
import { keySecretsFrom } from "@/lib/allowances/key-secret";
import { config, ConfigError } from "@/lib/config";
import { withConnectionAddress } from "@/lib/http/connection-address";
import { directHandler } from "@/lib/http/direct-routes";
import { brotliAssets } from "@/lib/http/brotli-assets";
import { sendWebResponse, webRequestOf } from "@/lib/http/node-bridge";
import { runShutdownHooks } from "@/lib/runtime/shutdown";
import { loadIdenticalChunksOnce } from "@/lib/runtime/identical-chunks";
import { SECURITY_HEADERS } from "@/lib/http/security-headers.mjs";

// As `next start` does, before Next is loaded.
Object.assign(process.env, { NODE_ENV: "production" });
// Refused here too, as `npm start` refuses it (a server started without the launcher), not at the first allowance.
try {
  keySecretsFrom(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
const distDir = process.env.NEXT_DIST_DIR || ".next";
// Turbopack's copies of one chunk, one per route, compiled and kept once (lib/runtime/identical-chunks.ts).
loadIdenticalChunksOnce(path.join(distDir, "server"));
const { default: next } = await import("next");
const port = Number(process.env.PORT ?? 3000);
const app = next({ dev: false, dir: process.cwd(), port });

async function serveDirect(
  route: NonNullable<ReturnType<typeof directHandler>>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  try {
    for (const { key, value } of SECURITY_HEADERS) res.setHeader(key, value);
    await sendWebResponse(await route(webRequestOf(req, res, `http://${req.headers.host ?? `localhost:${port}`}`)), res);
  } catch (error) {
    // The handlers answer their own errors; this is a failure to read the request or write the answer (the client
    // went away).
    console.error(`${req.method} ${req.url}: ${(error as Error).message}`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
}

await app.prepare();
const handle = app.getRequestHandler();
const limits = config().http;
const serveBrotli = brotliAssets(distDir);
// A client that trickles its headers or body, or holds a connection idle, is cut off; past the cap new connections
// are closed at once. Only receiving the request is timed: an answer that waits for a person (up to 60 s) is not.
const server = http.createServer(
  {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node checks those timeouts this often (30 s by default, which would let a slow client stay that much longer).
    connectionsCheckingInterval: 1000,
  },
  withConnectionAddress((req, res) => {
    if (serveBrotli(req, res)) return;
    const pathname = (req.url ?? "/").split("?", 1)[0];
    const route = directHandler(pathname, req.method ?? "GET");
    void (route ? serveDirect(route, req, res) : handle(req, res));
  }),
);
server.keepAliveTimeout = limits.keepAliveTimeoutMs;
server.maxConnections = limits.maxConnections;
// The Node it runs on, said once: npm start runs it on Node 24 even where the machine's Node is older (scripts/node24.mjs).
server.listen(port, () => console.log(`Agent Wallet listening on port ${port}, on Node ${process.versions.node}`));

/** Stop taking requests, let those under way end, finish what must not be lost (audit events), then exit. */
async function stop(): Promise<void> {
  server.close();
  server.closeIdleConnections();
  await runShutdownHooks(5_000);
  process.exit(0);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void stop());
