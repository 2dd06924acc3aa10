import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { loadIdenticalChunksOnce } from "./identical-chunks";

const require = createRequire(import.meta.url);

describe("loadIdenticalChunksOnce", () => {
  it("loads a copy that differs only in its source map comment as the first one, only within its own directory", () => {
    const build = fs.mkdtempSync(path.join(os.tmpdir(), "aw-chunks-"));
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "aw-chunks-"));
    fs.mkdirSync(path.join(build, "ssr"));
    const body = "module.exports = { loaded: Math.random() };";
    const write = (file: string, text: string) => {
      fs.writeFileSync(file, text);
      return file;
    };
    const first = write(path.join(build, "a.js"), `${body}\n//# sourceMappingURL=a.js.map`);
    const copy = write(path.join(build, "b.js"), `${body}\n//# sourceMappingURL=b.js.map`);
    const other = write(path.join(build, "c.js"), `${body} // another module\n//# sourceMappingURL=c.js.map`);
    const elsewhere = write(path.join(build, "ssr", "a.js"), `${body}\n//# sourceMappingURL=a.js.map`);
    const notBuild = write(path.join(outside, "a.js"), `${body}\n//# sourceMappingURL=a.js.map`);

    loadIdenticalChunksOnce(build);

    const loaded = require(first);
    assert.equal(require(copy), loaded);
    assert.equal(require.cache[copy], undefined, "the copy is never compiled");
    assert.notEqual(require(other), loaded);
    assert.notEqual(require(elsewhere), loaded);
    assert.notEqual(require(notBuild), loaded);
    assert.throws(() => require(path.join(build, "missing.js")), { code: "MODULE_NOT_FOUND" });
  });
});
