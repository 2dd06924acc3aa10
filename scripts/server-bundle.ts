// server.ts as plain JavaScript beside Next's build, so that the production server runs on bare Node: under
// tsx it would carry tsx's loader thread, a second V8 isolate of about 38 MB (docs/performance.md).
import path from "node:path";
import { bundleForNode } from "./node-bundle.mjs";

function bundleServer(distDir = process.env.NEXT_DIST_DIR || ".next"): string {
  return bundleForNode("server.ts", path.resolve(distDir, "agent-wallet-server.mjs"));
}

/**
 * The old generation's limit and growth, unless NODE_OPTIONS sets a limit (which then replaces both). Without a
 * limit V8 lets garbage pile up to hundreds of megabytes before it collects in earnest (400–700 MB resident under
 * load). Under a limit, V8 lets the old generation grow to at most halfway between what survived the last full
 * collection (about 63 MB) and the limit, and by default only 1.3× over it: at 160 MB that meant a full collection
 * every 0.6 s at half load, each a 30–40 ms stretch of marking on the event loop, and a client-side p99 of
 * 28–33 ms. 224 MB with 150 % growth lets it reach halfway (about 143 MB): a full collection every 1.6–1.8 s,
 * p99 18–21 ms, about 270 MB resident (docs/performance.md).
 */
const DEFAULT_HEAP = ["--max-old-space-size=224", "--heap-growing-percent=150"];

/** Node's arguments for the production server: the heap's limit and growth, and the compiled server.ts. */
export function serverArguments(): string[] {
  const heapSet = /--max-old-space-size/.test(process.env.NODE_OPTIONS ?? "");
  return [...(heapSet ? [] : DEFAULT_HEAP), bundleServer()];
}
