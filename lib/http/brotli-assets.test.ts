import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { acceptsBrotli } from "./brotli-assets";

describe("acceptsBrotli", () => {
  it("reads br from Accept-Encoding, unless refused with q=0", () => {
    assert.equal(acceptsBrotli("gzip, deflate, br, zstd"), true);
    assert.equal(acceptsBrotli("br;q=0.5"), true);
    assert.equal(acceptsBrotli("gzip, br;q=0"), false);
    assert.equal(acceptsBrotli("gzip, br ; q=0.0"), false);
    assert.equal(acceptsBrotli("gzip, brotli"), false);
    assert.equal(acceptsBrotli(undefined), false);
  });
});
