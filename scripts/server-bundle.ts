// server.ts as plain JavaScript beside Next's build, so that the production server runs on bare Node: under
// tsx it would carry tsx's loader thread, a second V8 isolate of about 38 MB (docs/performance.md).
import os from "node:os";
import path from "node:path";
import { bundleForNode } from "./node-bundle.mjs";

function bundleServer(distDir = process.env.NEXT_DIST_DIR || ".next"): string {
  return bundleForNode("server.ts", path.resolve(distDir, "agent-wallet-server.mjs"));
}

/**
 * The old generation's limit and growth, unless NODE_OPTIONS sets a limit (which then replaces both). Without a
 * limit V8 lets garbage pile up to 400–700 MB resident under load. Under one, it grows the old generation at most
 * halfway from what survived (about 63 MB) to the limit: at 160 MB a full collection came every 0.6 s at half
 * load, each 30–40 ms of marking on the event loop. 192 MB held 277–286 MB resident at peak under the read's load
 * on SQLite, over issue 58's 250 MB. 128 MB, now that the read's live heap is smaller: the old generation stays near
 * 70 MB under the read and its peak 40–45 MB lower (232–243 MB), the read still past 1.5× the bench's peer, and
 * PostgreSQL's peak through the bench 30–80 MB lower (251–283 MB against 280–347). What is left over 250 is mostly
 * tools/list's answers' buffers and native memory, outside V8's heap (docs/performance.md, "The server's settings";
 * decision 0044).
 */
const DEFAULT_HEAP = ["--max-old-space-size=128", "--heap-growing-percent=150"];

/**
 * The young generation's semi-spaces at 8 MB, unless NODE_OPTIONS sets a size: Node's 16 MB makes the young generation
 * 32 MB resident under load, for no throughput or tail a benchmark could tell from 8 (docs/performance.md, "The
 * server's settings"); at 4 the CPU a call grew.
 */
const DEFAULT_YOUNG_GENERATION = ["--max-semi-space-size=8"];

/**
 * V8's worker threads (parallel scavenges, concurrent marking, background compiles), unless NODE_OPTIONS sets a number:
 * one a core beyond the event loop's, at most Node's default of four. With four on two cores, a full collection's
 * concurrent marking (120–190 ms of CPU) took the event loop's core in 30–35 ms stalls, the p99 at half load
 * (docs/performance.md, "The server's settings").
 */
const DEFAULT_V8_WORKERS = [`--v8-pool-size=${Math.max(1, Math.min(4, os.availableParallelism() - 1))}`];

/**
 * WebAssembly stays on V8's baseline compiler (Liftoff) until a function has run about 55 times longer than V8's
 * default budget before it tiers up to TurboFan. The one module the server runs is Prisma's query compiler, which the
 * pages use (the hot paths run past it): with the default budget, its functions' optimised code and TurboFan's zones
 * added 20–27 MB of resident memory within the first pages, and the burst's peak was that jump. The pages' times did
 * not change (docs/performance.md, "The server's settings"). A flag V8 takes only on the command line, not in NODE_OPTIONS.
 */
const DEFAULT_WASM_TIERING = ["--wasm-tiering-budget=100000000"];

/**
 * The production server's environment beside the caller's, each value unless the operator set it. glibc's malloc keeps
 * at most two arenas: by default it opens up to eight a core as threads allocate (libuv's pool, V8's workers), and
 * under load their free space held 10–15 MB more resident memory. Its mmap and trim thresholds stay at their default
 * of 128 KiB: left free, glibc raises both each time a block it had mapped is freed (up to 32 and 64 MB), after which
 * such blocks (V8's compiler zones, Prisma's WebAssembly) come from the heap and stay resident once freed
 * (docs/performance.md, "The server's settings").
 */
export function serverEnvironment(): Record<string, string> {
  return {
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? "2",
    MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? "131072",
    MALLOC_TRIM_THRESHOLD_: process.env.MALLOC_TRIM_THRESHOLD_ ?? "131072",
  };
}

/**
 * Node's arguments for the production server: the heap's limit and growth, the young generation's size, V8's threads,
 * WebAssembly's tier-up, and the compiled server.ts.
 */
export function serverArguments(): string[] {
  const setByOperator = (flag: string) => (process.env.NODE_OPTIONS ?? "").includes(flag);
  return [
    ...(setByOperator("--max-old-space-size") ? [] : DEFAULT_HEAP),
    ...(setByOperator("--max-semi-space-size") ? [] : DEFAULT_YOUNG_GENERATION),
    ...(setByOperator("--v8-pool-size") ? [] : DEFAULT_V8_WORKERS),
    ...DEFAULT_WASM_TIERING,
    bundleServer(),
  ];
}
