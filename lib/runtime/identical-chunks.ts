// Turbopack gives each route of a production build its own copies of the server chunks that routes share: files that
// are byte for byte the same but for their source map comment (seven copies of one 513 KB chunk behind the API
// routes). Its runtime loads a chunk by path and keeps the first factory of each module, so every later copy was read,
// compiled and held in the heap with none of its code ever run: about 10 MB of script source under the benchmark's
// load (docs/performance.md, "The server's settings").
import crypto from "node:crypto";
import fs from "node:fs";
import Module from "node:module";
import path from "node:path";

type Load = (request: string, parent: unknown, isMain: boolean) => unknown;

/** A chunk's content without its trailing `//# sourceMappingURL=` comment, the only part in which copies differ. */
function withoutSourceMapComment(text: Buffer): Buffer {
  const comment = text.lastIndexOf("\n//# sourceMappingURL=");
  return comment < 0 ? text : text.subarray(0, comment);
}

/**
 * From now on, requiring a `.js` file under `folder` whose content (but for its source map comment) equals a file
 * already required from the same directory gives that file's module, from Node's module cache. Only the same
 * directory: a chunk's code may read its own `__dirname`.
 */
export function loadIdenticalChunksOnce(folder: string): void {
  const root = path.resolve(folder) + path.sep;
  const firstWithContent = new Map<string, string>();
  const loadAs = new Map<string, string>();
  const loader = Module as unknown as { _load: Load };
  const load = loader._load;
  loader._load = function (this: unknown, request, parent, isMain) {
    if (request.startsWith(root) && request.endsWith(".js")) {
      let canonical = loadAs.get(request);
      if (canonical === undefined) {
        let digest: string;
        try {
          digest = crypto
            .createHash("sha256")
            .update(withoutSourceMapComment(fs.readFileSync(request)))
            .digest("base64");
        } catch {
          // Unreadable: Node's own loader reports it as it would have.
          return load.call(this, request, parent, isMain);
        }
        const key = `${path.dirname(request)}\0${digest}`;
        canonical = firstWithContent.get(key) ?? request;
        firstWithContent.set(key, canonical);
        loadAs.set(request, canonical);
      }
      return load.call(this, canonical, parent, isMain);
    }
    return load.call(this, request, parent, isMain);
  };
}
