import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { JsonBodyError, MAX_JSON_DEPTH, parseJsonBody } from "./input-limits";

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("parseJsonBody", () => {
  it("parses JSON up to the depth limit", () => {
    assert.deepEqual(parseJsonBody('{"a":[1,{"b":"x"}]}'), { a: [1, { b: "x" }] });
    assert.ok(Array.isArray(parseJsonBody(nested(MAX_JSON_DEPTH))));
  });

  it("refuses deeper nesting and malformed text", () => {
    assert.throws(() => parseJsonBody(nested(MAX_JSON_DEPTH + 1)), JsonBodyError);
    assert.throws(() => parseJsonBody(`{"a":${nested(100_000)}}`), /at most 32 levels/);
    assert.throws(() => parseJsonBody("{"), /not JSON/);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const text = JSON.stringify({ s: `\\"${"[".repeat(100)}` });
    assert.deepEqual(parseJsonBody(text), JSON.parse(text));
  });
});
