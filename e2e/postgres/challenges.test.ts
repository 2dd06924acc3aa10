// A passkey assertion's challenge on PostgreSQL, where it is spent and the passkey read in one statement
// (lib/auth/challenges.ts spentChallengeAnd): in-process on a real database, with a software authenticator. Each
// refusal says why, as on SQLite, and of many sign-ins answering one challenge at once exactly one gets it.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPostgresDatabase, type PostgresDatabase } from "../support/app";
import { SoftAuthenticator } from "../support/soft-authenticator";
import { migrateDatabase } from "@/lib/db/migrate";

const APP_URL = "http://localhost:3999";

let database: PostgresDatabase;
let dataDir: string;
let passkeys: typeof import("@/lib/auth/passkeys");
let lib: typeof import("@/lib/db");

before(async () => {
  database = await createPostgresDatabase();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-pg-challenges-"));
  Object.assign(process.env, { DATA_DIR: dataDir, DATABASE_URL: database.url, APP_URL, BASE_URL: APP_URL, NEXTAUTH_URL: APP_URL });
  migrateDatabase(database.url);
  passkeys = await import("@/lib/auth/passkeys");
  lib = await import("@/lib/db");
  assert.ok(lib.usesPostgres());
});
after(async () => {
  await lib.disconnectDatabase();
  await database.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function signUp(email: string) {
  const authenticator = new SoftAuthenticator({ origin: APP_URL });
  const user = await passkeys.completeSignUp(authenticator.register(await passkeys.signUpOptions(email)));
  return { user, authenticator };
}

async function rejectsWith(promise: Promise<unknown>, code: string, message: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.equal((error as { code?: string }).code, code, String(error));
    assert.match((error as Error).message, message);
    return true;
  });
}

const usedAt = async (challenge: string) => (await lib.db().webAuthnChallenge.findUniqueOrThrow({ where: { challenge } })).usedAt;

describe("an assertion's challenge, spent in one statement (PostgreSQL)", () => {
  it("signs in once with a challenge; a reused, expired, other-purpose or unknown one is refused as such", async () => {
    const { user, authenticator } = await signUp("pg-challenges@example.com");
    const options = await passkeys.assertionOptions("sign-in");
    assert.equal((await passkeys.completeSignIn(authenticator.assert(options))).id, user.id);
    await rejectsWith(passkeys.completeSignIn(authenticator.assert(options)), "invalid_challenge", /already used/);

    const stale = await passkeys.assertionOptions("sign-in", {}, () => new Date(Date.now() - 10 * 60_000));
    await rejectsWith(passkeys.completeSignIn(authenticator.assert(stale)), "invalid_challenge", /expired/);
    assert.equal(await usedAt(stale.challenge), null, "an expired challenge is not spent");

    const forConsent = await passkeys.assertionOptions("consent", { userId: user.id });
    await rejectsWith(passkeys.completeSignIn(authenticator.assert(forConsent)), "invalid_challenge", /unknown/);
    assert.equal(await usedAt(forConsent.challenge), null, "another purpose's challenge is not spent");

    await rejectsWith(passkeys.completeSignIn(authenticator.assert({ challenge: "bm90LWlzc3VlZA" })), "invalid_challenge", /unknown/);
  });

  it("spends the challenge of a passkey that is not registered, and of another account's passkey", async () => {
    const stranger = new SoftAuthenticator({ origin: APP_URL });
    const options = await passkeys.assertionOptions("sign-in");
    await rejectsWith(passkeys.completeSignIn(stranger.assert(options)), "passkey_rejected", /not registered/);
    assert.ok(await usedAt(options.challenge));

    const [owner, other] = [await signUp("pg-owner@example.com"), await signUp("pg-other@example.com")];
    const bound = await passkeys.assertionOptions("consent", { userId: owner.user.id });
    await rejectsWith(passkeys.verifyAssertion(other.authenticator.assert(bound), "consent"), "passkey_rejected", /another account/);
    assert.ok(await usedAt(bound.challenge));
  });

  it("of 20 sign-ins answering one challenge at once, exactly one gets it", async () => {
    const { authenticator } = await signUp("pg-race@example.com");
    const options = await passkeys.assertionOptions("sign-in");
    const assertion = authenticator.assert(options);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => passkeys.completeSignIn(assertion)));
    assert.equal(results.filter((result) => result.status === "fulfilled").length, 1);
    for (const result of results.filter((entry) => entry.status === "rejected")) {
      assert.match(String((result as PromiseRejectedResult).reason.message), /already used/);
    }
  });
});
