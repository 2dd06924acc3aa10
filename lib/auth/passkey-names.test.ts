import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { passkeyNameSchema } from "./passkeys";

describe("passkey names", () => {
  it("refuse a hidden or text-direction character, naming it, as wallet and client names do", () => {
    for (const [name, code] of [
      ["Phone\u202E enoyreve", "U+202E"],
      ["Lap\u200Btop", "U+200B"],
      ["Key\u0007", "U+0007"],
    ]) {
      const parsed = passkeyNameSchema.safeParse(name);
      assert.equal(parsed.success, false, name);
      assert.match(parsed.error!.issues[0].message, new RegExp(`^A passkey name must not contain ${code.replace("+", "\\+")}`));
    }
  });

  it("accept names in any script, with emoji", () => {
    for (const name of ["Büro-Schlüssel", "手机", "👩‍💻 laptop", "❤️ phone"]) assert.equal(passkeyNameSchema.parse(name), name);
  });
});
