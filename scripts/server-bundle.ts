// server.ts as plain JavaScript beside Next's build, so that the production server runs on bare Node: under
// tsx it would carry tsx's loader thread, a second V8 isolate of about 38 MB (docs/performance.md).
import path from "node:path";
import { bundleForNode } from "./node-bundle.mjs";

function bundleServer(distDir = process.env.NEXT_DIST_DIR || ".next"): string {
  return bundleForNode("server.ts", path.resolve(distDir, "agent-wallet-server.mjs"));
}

/**
 * The old generation's limit, unless NODE_OPTIONS sets one: V8 otherwise lets garbage pile up to hundreds of
 * megabytes before it collects in earnest (400–700 MB resident under load), where 160 MB holds the server near
 * 240 MB at the same throughput; its live heap is about 70 MB (docs/performance.md).
 */
const DEFAULT_HEAP_MB = 160;

/** Node's arguments for the production server: the heap limit and the compiled server.ts. */
export function serverArguments(): string[] {
  const heapSet = /--max-old-space-size/.test(process.env.NODE_OPTIONS ?? "");
  return [...(heapSet ? [] : [`--max-old-space-size=${DEFAULT_HEAP_MB}`]), bundleServer()];
}
