import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { visibleName, visibleSegments } from "./visible-text";

const name = z.string().superRefine(visibleName("client_name"));

describe("visible text", () => {
  for (const [label, text, code] of [
    ["a right-to-left override", "Wallet\u202Egpj.exe", "U+202E"],
    ["a first-strong isolate", "Wallet\u2068x", "U+2068"],
    ["a zero-width space", "Claude\u200B", "U+200B"],
    ["a bell", "Bot\u0007", "U+0007"],
    ["a newline", "Line\nbreak", "U+000A"],
    ["a C1 control", "x\u009Bx", "U+009B"],
    ["a Hangul filler", "\u3164", "U+3164"],
    ["a byte order mark", "x\uFEFFy", "U+FEFF"],
    ["a line separator", "x\u2028y", "U+2028"],
    ["a zero-width joiner between letters", "pay\u200Dpal", "U+200D"],
  ] as const) {
    it(`refuses a name with ${label}, naming ${code}`, () => {
      const result = name.safeParse(text);
      assert.equal(result.success, false);
      assert.match(result.error!.issues[0].message, new RegExp(`^client_name must not contain ${code.replace("+", "\\+")}:`));
    });
  }

  it("accepts names in any script, with emoji sequences", () => {
    for (const text of ["Claude Desktop", "Кошелёк", "محفظة", "財布", "Family 👨‍👩‍👧", "Love ❤️", "Dev 👩🏽‍💻", "naïve café"])
      assert.equal(name.safeParse(text).success, true, text);
  });

  it("cuts a message into its visible text and each hidden character, keeping line breaks and tabs", () => {
    assert.deepEqual(visibleSegments("Sign in\n\tto \u202Emoc.live\u202C\u200B\r\n"), [
      { text: "Sign in\n\tto " },
      { hidden: "U+202E" },
      { text: "moc.live" },
      { hidden: "U+202C" },
      { hidden: "U+200B" },
      { hidden: "U+000D" },
      { text: "\n" },
    ]);
    assert.deepEqual(visibleSegments("plain 👩‍💻"), [{ text: "plain 👩‍💻" }]);
    assert.deepEqual(visibleSegments(""), []);
  });

  it("joining the segments back, each hidden one as its character, gives the text exactly", () => {
    const text = "a\u0000b\u{E0041}c\uD800d\u00ADe";
    const rebuilt = visibleSegments(text)
      .map((segment) => ("text" in segment ? segment.text : String.fromCodePoint(parseInt(segment.hidden.slice(2), 16))))
      .join("");
    assert.equal(rebuilt, text);
  });
});
