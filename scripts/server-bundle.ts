// server.ts as plain JavaScript beside Next's build, so that the production server runs on bare Node: under
// tsx it would carry tsx's loader thread, a second V8 isolate of about 38 MB (docs/performance.md).
import fs from "node:fs";
import path from "node:path";
import { buildSync } from "esbuild";

/**
 * Compiles server.ts with the modules it imports (not packages) and returns the file to run. Milliseconds, so
 * it runs at every start; the file is replaced atomically, since test processes start apps side by side.
 */
function bundleServer(distDir = process.env.NEXT_DIST_DIR || ".next"): string {
  const outfile = path.resolve(distDir, "agent-wallet-server.mjs");
  const [output] = buildSync({
    entryPoints: ["server.ts"],
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    outfile,
    write: false,
    logLevel: "silent",
  }).outputFiles;
  const staged = `${outfile}.${process.pid}`;
  fs.writeFileSync(staged, output.contents);
  fs.renameSync(staged, outfile);
  return outfile;
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
