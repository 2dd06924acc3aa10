import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { generateUserCode, normalizeUserCode } from "./device-authorization";

describe("user codes (RFC 8628 §6.1)", () => {
  it("are 8 consonants shown as XXXX-XXXX, drawn from the whole alphabet", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const code = generateUserCode();
      assert.match(code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      for (const char of code.replace("-", "")) seen.add(char);
    }
    assert.equal(seen.size, 20);
  });

  it("are compared without case, dashes or spaces", () => {
    assert.equal(normalizeUserCode("BCDF-GHJK"), "BCDFGHJK");
    assert.equal(normalizeUserCode("bcdf ghjk"), "BCDFGHJK");
    assert.equal(normalizeUserCode(" bcdfghjk "), "BCDFGHJK");
  });

  it("refuses what cannot be one: vowels, digits, another length", () => {
    for (const typed of ["", "BCDF-GHJ", "BCDF-GHJKL", "ABCD-FGHJ", "BCD0-GHJK", "BCDF_GHJK", "ＢＣＤＦ-ＧＨＪＫ"]) {
      assert.equal(normalizeUserCode(typed), null, typed);
    }
  });
});
