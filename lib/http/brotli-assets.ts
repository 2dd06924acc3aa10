// The build's JavaScript and CSS (/_next/static) in Brotli for the browsers that accept it: Next compresses with gzip
// only, and Brotli at its highest quality is about 14 % smaller on these files, which a phone on a slow link waits
// for before any screen works (docs/performance.md). The files of a build never change (their names are their
// hashes), so each is compressed once, in the background from the server's start, and kept in memory; until it is
// ready, or for a browser without Brotli, Next serves it as before.
import fs from "node:fs/promises";
import path from "node:path";
import zlib from "node:zlib";
import { promisify } from "node:util";
import type http from "node:http";
import { SECURITY_HEADERS } from "./security-headers.mjs";

const brotli = promisify(zlib.brotliCompress);
const ASSET = /^\/_next\/static\/((?:[A-Za-z0-9_-][A-Za-z0-9_.-]*\/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*\.(js|css))$/;
const TYPES = { js: "application/javascript; charset=UTF-8", css: "text/css; charset=UTF-8" } as const;

/** Whether an Accept-Encoding header accepts `br` (present, and not with q=0). */
export function acceptsBrotli(header: string | undefined): boolean {
  return (header ?? "").split(",").some((entry) => {
    const [name, ...parameters] = entry.split(";").map((part) => part.trim());
    const quality = parameters.find((parameter) => parameter.startsWith("q="));
    return name === "br" && (quality === undefined || Number(quality.slice(2)) > 0);
  });
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await fs.readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && /\.(js|css)$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * Starts compressing the build's assets under `distDir`, and returns the handler that answers a request for one of
 * them in Brotli when it is ready and the browser accepts it (true), or leaves the request to Next (false).
 */
export function brotliAssets(distDir: string): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const root = path.resolve(distDir, "static");
  const ready = new Map<string, Buffer>();
  void (async () => {
    // One at a time, on libuv's threads: the event loop keeps serving meanwhile.
    for (const file of await filesUnder(root)) {
      const body = await fs.readFile(file);
      ready.set(
        file,
        await brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      );
    }
  })().catch((error: Error) => console.error(`Brotli assets: ${error.message}; Next serves them with gzip`));

  return (req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const match = ASSET.exec((req.url ?? "").split("?", 1)[0]);
    if (!match || !acceptsBrotli(req.headers["accept-encoding"])) return false;
    const body = ready.get(path.join(root, match[1]));
    if (!body) return false;
    for (const { key, value } of SECURITY_HEADERS) res.setHeader(key, value);
    res.writeHead(200, {
      "Content-Type": TYPES[match[2] as keyof typeof TYPES],
      "Content-Encoding": "br",
      "Content-Length": body.length,
      "Cache-Control": "public, max-age=31536000, immutable",
      Vary: "Accept-Encoding",
    });
    res.end(req.method === "HEAD" ? undefined : body);
    return true;
  };
}
