import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { canonicalJson, randomId } from "./index";

describe("canonicalJson", () => {
  it("sorts object keys at every level, whatever the insertion order", () => {
    const a = canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: "x" } });
    const b = canonicalJson({ a: { c: "x", d: [3, { y: 2, z: 1 }] }, b: 1 });
    assert.equal(a, b);
    assert.equal(a, '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it("keeps array order", () => {
    assert.equal(canonicalJson([3, 1, 2]), "[3,1,2]");
    assert.notEqual(canonicalJson([1, 2]), canonicalJson([2, 1]));
  });

  it("sorts by code unit, not by locale", () => {
    assert.equal(canonicalJson({ b: 1, B: 2, a: 3, _: 4 }), '{"B":2,"_":4,"a":3,"b":1}');
  });

  it("drops undefined members like JSON and encodes null, strings and numbers as JSON does", () => {
    assert.equal(canonicalJson({ a: undefined, b: null, c: 'q"\n', d: 1.5, e: true }), '{"b":null,"c":"q\\"\\n","d":1.5,"e":true}');
    assert.equal(canonicalJson(null), "null");
    assert.equal(canonicalJson("x"), '"x"');
  });

  it("agrees with JSON.parse: its output is valid JSON of the same value", () => {
    const value = { z: [1, { b: "é", a: null }], a: { y: false } };
    assert.deepEqual(JSON.parse(canonicalJson(value)), value);
  });

  it("encodes a Date as JSON does (its ISO string), not as an empty object", () => {
    const at = new Date("2026-01-02T03:04:05.678Z");
    assert.equal(canonicalJson({ at }), '{"at":"2026-01-02T03:04:05.678Z"}');
    assert.equal(canonicalJson([at]), JSON.stringify([at]));
  });
});

describe("randomId", () => {
  it("gives 128-bit identifiers, never the same twice, across many refills of its random bytes", () => {
    const ids = Array.from({ length: 5_000 }, () => randomId("rq_"));
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^rq_[A-Za-z0-9_-]{22}$/);
    // no two consecutive identifiers share bytes (each is cut from bytes not handed out before)
    const bytes = ids.map((id) => Buffer.from(id.slice(3), "base64url"));
    assert.ok(bytes.every((value) => value.length === 16));
    const pairs = new Set(bytes.flatMap((value) => [0, 4, 8, 12].map((at) => value.subarray(at, at + 4).toString("hex"))));
    assert.ok(pairs.size > bytes.length * 4 - 10, "four-byte pieces repeat no more than chance allows");
  });
});
