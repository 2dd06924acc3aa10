// The session cookie as an /api route reads it (lib/auth/session.ts currentUser), in-process on a real SQLite
// database, with cookies minted by next-auth's own encoder: a cookie decrypted once is remembered, yet the person's
// session version is checked on every request, and no remembered cookie outlives its exp.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { encode } from "next-auth/jwt";
import { useTestDatabase, type TestDatabase } from "../support/database";

const APP_URL = "http://localhost:3999";

let database: TestDatabase;
let session: typeof import("@/lib/auth/session");
let secret: string;
let userId: string;

before(async () => {
  database = await useTestDatabase({ appUrl: APP_URL });
  session = await import("@/lib/auth/session");
  secret = (await import("@/lib/config")).config().sessionSecret;
  const { db } = await import("@/lib/db");
  userId = (await db().user.create({ data: { id: "u_cookie", email: "cookie@example.com", createdAt: new Date() } })).id;
});
after(() => database.cleanup());

/** A session cookie as next-auth writes it at sign-in, ending `maxAge` seconds from now. */
async function cookie(maxAge = 3600, sessionVersion = 0) {
  const token = await encode({ token: { sub: userId, sessionVersion, signedInAt: Math.floor(Date.now() / 1000) }, secret, maxAge });
  return `next-auth.session-token=${token}`;
}

const userOf = (value: string) => session.currentUser(new Request(`${APP_URL}/api/passkeys`, { headers: { cookie: value } }));

describe("the session cookie, decrypted once per cookie", () => {
  it("gives the person for the same cookie on every request, until their session version moves", async () => {
    const value = await cookie();
    assert.equal((await userOf(value))?.id, userId);
    assert.equal((await userOf(value))?.id, userId, "the remembered cookie");
    await session.signOutEverywhere(userId);
    assert.equal(await userOf(value), null, "a remembered cookie still ends with its session");
    assert.equal((await userOf(await cookie(3600, 1)))?.id, userId, "a cookie of the new version");
  });

  it("never answers for a cookie that did not decrypt, nor one past its exp", async () => {
    const value = await cookie(3600, 1);
    assert.equal((await userOf(value))?.id, userId);
    // one character of the tag changed, to one it is not
    const at = value.length - 3;
    const tampered = `${value.slice(0, at)}${value[at] === "A" ? "B" : "A"}${value.slice(at + 1)}`;
    assert.notEqual(tampered, value);
    assert.equal(await userOf(tampered), null);
    assert.equal(await userOf(await cookie(-60, 1)), null, "expired a minute ago");
  });

  it("forgets a remembered cookie at its exp", async () => {
    const value = await cookie(1, 1);
    assert.equal((await userOf(value))?.id, userId, "remembered while it lasts");
    // jose allows 15 s of clock skew past exp, as next-auth's reader does: past that, the cookie is refused.
    await new Promise((resolve) => setTimeout(resolve, 17_000));
    assert.equal(await userOf(value), null);
  });
});
