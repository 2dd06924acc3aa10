// withLiterals writes a transaction script's parameters into its SQL (decision 0020): whatever a string holds, its
// literal is the one pg's own escapeLiteral makes, so PostgreSQL reads back exactly the string given.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import pg from "pg";
import { withLiterals } from "./transaction-script";

describe("withLiterals", () => {
  it("quotes every string as pg's escapeLiteral does", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "'", "\\", "?", "$", "E", " ", "🙂", "\n") });
    fc.assert(
      fc.property(fc.oneof(text, fc.string({ unit: "grapheme" })), (value) => {
        fc.pre(!value.includes("\0"));
        assert.equal(withLiterals("SELECT ? AS v", [value]), `SELECT ${pg.escapeLiteral(value)} AS v`);
      }),
    );
  });

  it("refuses a NUL, and a count of parameters that differs from the placeholders", () => {
    assert.throws(() => withLiterals("SELECT ?", ["a\0b"]), /NUL/);
    assert.throws(() => withLiterals("SELECT ?, ?", ["a"]), /More placeholders/);
    assert.throws(() => withLiterals("SELECT ?", ["a", "b"]), /Fewer placeholders/);
  });
});
