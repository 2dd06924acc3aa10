// WebAuthn ceremonies against lib/auth and lib/wallet/credentials in-process,
// on a real migrated SQLite database, with a software authenticator: the happy
// paths, then every way a response must be refused (reused, expired or
// other-purpose challenge, another user's passkey, wrong origin or RP ID,
// missing user verification, a cloned authenticator's counter, a bad
// signature), and the rules for removing and renaming passkeys.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { useTestDatabase, type TestDatabase } from "../support/database";
import { FLAGS, SoftAuthenticator, tamperSignature } from "../support/soft-authenticator";

const APP_URL = "http://localhost:3999";

type Passkeys = typeof import("@/lib/auth/passkeys");
type Credentials = typeof import("@/lib/wallet/credentials");
type DbModule = typeof import("@/lib/db");

let database: TestDatabase;
let passkeys: Passkeys;
let credentials: Credentials;
let db: DbModule["db"];

before(async () => {
  database = await useTestDatabase({ appUrl: APP_URL });
  passkeys = await import("@/lib/auth/passkeys");
  credentials = await import("@/lib/wallet/credentials");
  db = (await import("@/lib/db")).db;
});
after(() => database.cleanup());

let emails = 0;
const nextEmail = (label: string) => `${label}-${++emails}@example.com`;

/** Signs a person up with a fresh software authenticator. */
async function signUp(label: string, options: { prf?: boolean } = {}) {
  const authenticator = new SoftAuthenticator({ origin: APP_URL, prf: options.prf });
  const creation = await passkeys.signUpOptions(nextEmail(label));
  const user = await passkeys.completeSignUp(authenticator.register(creation));
  return { user, authenticator };
}

/** Asserts that a promise rejects with an AppError of this code and a message matching `message`. */
async function rejectsWith(promise: Promise<unknown>, code: string, message?: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.equal((error as { code?: string }).code, code, `expected error code ${code}, got ${String(error)}`);
    if (message) assert.match((error as Error).message, message);
    return true;
  });
}

/** Everything a refused ceremony must leave alone. */
async function snapshot() {
  const [users, passkeyRows, credentialRows, seals, audit] = await Promise.all([
    db().user.findMany({ orderBy: { id: "asc" } }),
    db().passkey.findMany({ orderBy: { id: "asc" }, select: { id: true, userId: true, name: true, counter: true, lastUsedAt: true } }),
    db().credential.findMany({ orderBy: { id: "asc" } }),
    db().credentialSeal.findMany({ orderBy: [{ credentialId: "asc" }, { passkeyId: "asc" }] }),
    db().auditEvent.count(),
  ]);
  return { users, passkeys: passkeyRows, credentials: credentialRows, seals, audit };
}

async function challengeRow(challenge: string) {
  return db().webAuthnChallenge.findUniqueOrThrow({ where: { challenge } });
}

const sealInput = () => ({
  ciphertext: randomBytes(48).toString("base64url"),
  iv: randomBytes(12).toString("base64url"),
  prfSalt: randomBytes(32).toString("base64url"),
});

describe("WebAuthn with a software authenticator", () => {
  describe("happy paths", () => {
    it("signs up: the user, a PRF-capable passkey and a user.signed_up event are stored", async () => {
      const authenticator = new SoftAuthenticator({ origin: APP_URL });
      const email = nextEmail("Happy").toUpperCase();
      const creation = await passkeys.signUpOptions(email);
      assert.equal(creation.rp.id, "localhost");
      assert.equal(creation.authenticatorSelection?.userVerification, "required");
      assert.equal(creation.authenticatorSelection?.residentKey, "required");
      const user = await passkeys.completeSignUp(authenticator.register(creation));
      assert.equal(user.email, email.toLowerCase());

      const stored = await db().user.findUniqueOrThrow({ where: { id: user.id }, include: { passkeys: true } });
      assert.equal(stored.email, email.toLowerCase());
      assert.equal(stored.passkeys.length, 1);
      const [passkey] = stored.passkeys;
      assert.equal(passkey.id, authenticator.id);
      assert.equal(passkey.prfCapable, true);
      assert.equal(passkey.counter, 0);
      assert.deepEqual(JSON.parse(passkey.transports), ["internal"]);

      const event = await db().auditEvent.findFirst({ where: { type: "user.signed_up", userId: user.id } });
      assert.ok(event, "a user.signed_up audit event");
      assert.deepEqual(JSON.parse(event.data), { passkey: authenticator.id, canSealKeys: true });
      assert.ok((await challengeRow(creation.challenge)).usedAt, "the sign-up challenge is spent");
    });

    it("sign-up does not reveal whether an email has an account", async () => {
      const email = nextEmail("taken");
      const first = new SoftAuthenticator({ origin: APP_URL });
      await passkeys.completeSignUp(first.register(await passkeys.signUpOptions(email)));
      // Step 1 answers a taken email exactly as a new one: options of the same shape, for a fresh user id.
      const taken = await passkeys.signUpOptions(email);
      const fresh = await passkeys.signUpOptions(nextEmail("fresh"));
      assert.deepEqual(Object.keys(taken).sort(), Object.keys(fresh).sort());
      assert.notEqual(taken.user.id, (await db().user.findUniqueOrThrow({ where: { email } })).id);
      // Step 2 refuses with the message any refused registration gets, and stores nothing.
      const before = await snapshot();
      await rejectsWith(
        passkeys.completeSignUp(new SoftAuthenticator({ origin: APP_URL }).register(taken)),
        "sign_up_refused",
        /^This passkey could not create an account\. If you already have one, sign in with its passkey instead\.$/,
      );
      assert.deepEqual(await snapshot(), before);
    });

    it("signs up without PRF: the passkey is stored as not PRF-capable", async () => {
      const { user } = await signUp("noprf", { prf: false });
      const [passkey] = await db().passkey.findMany({ where: { userId: user.id } });
      assert.equal(passkey.prfCapable, false);
    });

    it("signs in with a discoverable passkey: returns its user, moves the counter and lastUsedAt", async () => {
      const { user, authenticator } = await signUp("signin");
      const before = await db().passkey.findUniqueOrThrow({ where: { id: authenticator.id } });
      const options = await passkeys.assertionOptions("sign-in");
      assert.equal(options.userVerification, "required");
      assert.equal(options.allowCredentials, undefined, "a discoverable sign-in names no credential");
      await new Promise((resolve) => setTimeout(resolve, 5));
      const signedIn = await passkeys.completeSignIn(authenticator.assert(options));
      assert.deepEqual(signedIn, { id: user.id, email: user.email });
      const after = await db().passkey.findUniqueOrThrow({ where: { id: authenticator.id } });
      assert.equal(after.counter, 1);
      assert.ok(after.lastUsedAt! > before.lastUsedAt!, "lastUsedAt moves forward");
      assert.ok(await db().auditEvent.findFirst({ where: { type: "user.signed_in", userId: user.id } }));

      // and again, with the next counter value
      await passkeys.completeSignIn(authenticator.assert(await passkeys.assertionOptions("sign-in")));
      assert.equal((await db().passkey.findUniqueOrThrow({ where: { id: authenticator.id } })).counter, 2);
    });

    it("adds a second passkey to an account, which can then sign in", async () => {
      const { user } = await signUp("second");
      const second = new SoftAuthenticator({ origin: APP_URL });
      const options = await passkeys.addPasskeyOptions(user.id);
      assert.equal(options.excludeCredentials?.length, 1);
      const added = await passkeys.completeAddPasskey(user.id, second.register(options), "Laptop");
      assert.deepEqual(added, { id: second.id, name: "Laptop", prfCapable: true });
      const event = await db().auditEvent.findFirst({ where: { type: "passkey.added", userId: user.id } });
      assert.ok(event, "a passkey.added audit event");
      assert.deepEqual(JSON.parse(event.data), { passkey: second.id, canSealKeys: true });
      const signedIn = await passkeys.completeSignIn(second.assert(await passkeys.assertionOptions("sign-in")));
      assert.equal(signedIn.id, user.id);
    });

    it("seals a key: connectCredential stores the seal under the passkey that answered", async () => {
      const { user, authenticator } = await signUp("seal");
      const { credentialId, options } = await credentials.sealingOptions(user.id);
      assert.deepEqual(
        options.allowCredentials?.map((entry) => entry.id),
        [authenticator.id],
      );
      const address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
      const stored = await credentials.connectCredential(user.id, {
        kind: "evm",
        name: "Main",
        address,
        seal: sealInput(),
        assertion: authenticator.assert(options),
      });
      assert.deepEqual(stored, { id: credentialId, name: "Main", kind: "evm", address });
      const seals = await db().credentialSeal.findMany({ where: { credentialId } });
      assert.deepEqual(
        seals.map((seal) => seal.passkeyId),
        [authenticator.id],
      );
    });
  });

  describe("challenges", () => {
    it("refuses a sign-in assertion submitted a second time: the challenge was already used", async () => {
      const { user, authenticator } = await signUp("reuse");
      const assertion = authenticator.assert(await passkeys.assertionOptions("sign-in"));
      assert.equal((await passkeys.completeSignIn(assertion)).id, user.id);
      const state = await snapshot();
      await rejectsWith(passkeys.completeSignIn(assertion), "invalid_challenge", /already used/);
      assert.deepEqual(await snapshot(), state, "a replay changes nothing");
    });

    it("lets exactly one of 10 concurrent submissions of one assertion through", async () => {
      const { user, authenticator } = await signUp("race");
      const assertion = authenticator.assert(await passkeys.assertionOptions("sign-in"));
      const results = await Promise.allSettled(Array.from({ length: 10 }, () => passkeys.completeSignIn(assertion)));
      const fulfilled = results.filter((result) => result.status === "fulfilled");
      const rejected = results.filter((result): result is PromiseRejectedResult => result.status === "rejected");
      assert.equal(fulfilled.length, 1, "exactly one sign-in");
      assert.equal((fulfilled[0] as PromiseFulfilledResult<{ id: string }>).value.id, user.id);
      for (const { reason } of rejected) {
        assert.equal(reason.code, "invalid_challenge");
        assert.match(reason.message, /already used/);
      }
      assert.equal(await db().auditEvent.count({ where: { type: "user.signed_in", userId: user.id } }), 1);
      assert.equal((await db().passkey.findUniqueOrThrow({ where: { id: authenticator.id } })).counter, 1);
    });

    it("refuses an expired challenge (issued 6 minutes ago)", async () => {
      const { authenticator } = await signUp("expired");
      const sixMinutesAgo = () => new Date(Date.now() - 6 * 60_000);
      const options = await passkeys.assertionOptions("sign-in", {}, sixMinutesAgo);
      const state = await snapshot();
      await rejectsWith(passkeys.completeSignIn(authenticator.assert(options)), "invalid_challenge", /expired/);
      assert.deepEqual(await snapshot(), state);
    });

    it("accepts a challenge issued 4 minutes ago (the expiry is 5 minutes, not less)", async () => {
      const { user, authenticator } = await signUp("fresh");
      const options = await passkeys.assertionOptions("sign-in", {}, () => new Date(Date.now() - 4 * 60_000));
      assert.equal((await passkeys.completeSignIn(authenticator.assert(options))).id, user.id);
    });

    it("refuses a sign-up challenge answered as a sign-in, and leaves that challenge unspent", async () => {
      const { authenticator } = await signUp("purpose");
      const signUpChallenge = await passkeys.signUpOptions(nextEmail("purpose-other"));
      const state = await snapshot();
      await rejectsWith(passkeys.completeSignIn(authenticator.assert(signUpChallenge)), "invalid_challenge", /unknown/);
      assert.deepEqual(await snapshot(), state);
      assert.equal((await challengeRow(signUpChallenge.challenge)).usedAt, null);
    });

    it("refuses a seal challenge answered as a sign-in", async () => {
      const { user, authenticator } = await signUp("purpose-seal");
      const { options } = await credentials.sealingOptions(user.id);
      await rejectsWith(passkeys.completeSignIn(authenticator.assert(options)), "invalid_challenge", /unknown/);
    });

    it("refuses a challenge the server never issued", async () => {
      const { authenticator } = await signUp("unknown");
      await rejectsWith(
        passkeys.completeSignIn(authenticator.assert({ challenge: randomBytes(32).toString("base64url") })),
        "invalid_challenge",
        /unknown/,
      );
    });
  });

  describe("another user's passkey", () => {
    it("refuses B's passkey answering a seal challenge issued to A, and stores no credential", async () => {
      const a = await signUp("alice");
      const b = await signUp("bob");

      const issuedToA = await passkeys.assertionOptions("seal", { userId: a.user.id });
      await rejectsWith(passkeys.verifyAssertion(b.authenticator.assert(issuedToA), "seal"), "passkey_rejected", /another account/);
      assert.ok((await challengeRow(issuedToA.challenge)).usedAt, "the challenge is spent");

      const { options } = await credentials.sealingOptions(a.user.id);
      const state = await snapshot();
      const countBefore = await db().credential.count();
      await rejectsWith(
        credentials.connectCredential(a.user.id, {
          kind: "evm",
          name: "Stolen",
          address: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
          seal: sealInput(),
          assertion: b.authenticator.assert(options),
        }),
        "passkey_rejected",
        /another account/,
      );
      assert.equal(await db().credential.count(), countBefore, "no credential stored");
      assert.deepEqual(await snapshot(), state, "B's counter is not moved either");

      // B answering B's own challenge, submitted to A's account
      const issuedToB = await credentials.sealingOptions(b.user.id);
      await rejectsWith(
        credentials.connectCredential(a.user.id, {
          kind: "evm",
          name: "Crossed",
          address: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
          seal: sealInput(),
          assertion: b.authenticator.assert(issuedToB.options),
        }),
        "invalid_challenge",
        /another account/,
      );
      assert.equal(await db().credential.count(), countBefore, "no credential stored");
    });

    it("refuses a passkey that is not registered", async () => {
      const stranger = new SoftAuthenticator({ origin: APP_URL });
      const options = await passkeys.assertionOptions("sign-in");
      await rejectsWith(passkeys.completeSignIn(stranger.assert(options)), "passkey_rejected", /not registered/);
      assert.ok((await challengeRow(options.challenge)).usedAt);
    });
  });

  describe("forged or broken assertions", () => {
    const cases: {
      name: string;
      forge: (authenticator: SoftAuthenticator, options: { challenge: string }) => ReturnType<SoftAuthenticator["assert"]>;
      message: RegExp;
    }[] = [
      {
        name: "a wrong origin (https://evil.example)",
        forge: (auth, options) => auth.assert(options, { origin: "https://evil.example" }),
        message: /origin "https:\/\/evil\.example"/,
      },
      { name: "a wrong RP ID", forge: (auth, options) => auth.assert(options, { rpId: "evil.example" }), message: /Unexpected RP ID hash/ },
      {
        name: "user verification missing (flags UP only)",
        forge: (auth, options) => auth.assert(options, { flags: FLAGS.UP }),
        message: /User verification required/,
      },
      {
        name: "user presence missing (flags UV only)",
        forge: (auth, options) => auth.assert(options, { flags: FLAGS.UV }),
        message: /User not present/,
      },
      {
        name: "a registration clientData type",
        forge: (auth, options) => auth.assert(options, { type: "webauthn.create" }),
        message: /response type/,
      },
      {
        name: "a counter that does not increase (a cloned authenticator)",
        forge: (auth, options) => auth.assert(options, { counter: auth.counter }),
        message: /counter/,
      },
      { name: "a counter lower than the stored one", forge: (auth, options) => auth.assert(options, { counter: 0 }), message: /counter/ },
      { name: "a tampered signature", forge: (auth, options) => tamperSignature(auth.assert(options)), message: /rejected/ },
    ];

    for (const { name, forge, message } of cases) {
      it(`refuses ${name}; only the challenge is spent`, async () => {
        const { authenticator } = await signUp("forged");
        // one good sign-in first, so the stored counter is above zero
        await passkeys.completeSignIn(authenticator.assert(await passkeys.assertionOptions("sign-in")));
        const options = await passkeys.assertionOptions("sign-in");
        const forged = forge(authenticator, options);
        const state = await snapshot();
        await rejectsWith(passkeys.completeSignIn(forged), "passkey_rejected", message);
        assert.deepEqual(await snapshot(), state, "no state changed");
        assert.ok((await challengeRow(options.challenge)).usedAt, "the challenge is spent");
        // the challenge cannot be retried with a good assertion either
        await rejectsWith(passkeys.completeSignIn(authenticator.assert(options)), "invalid_challenge", /already used/);
      });
    }

    it("refuses the second of two concurrent assertions carrying the same counter (a clone racing the original)", async () => {
      const { user, authenticator } = await signUp("clone-race");
      await passkeys.completeSignIn(authenticator.assert(await passkeys.assertionOptions("sign-in")));
      const counter = authenticator.counter + 1;
      const [first, second] = await Promise.all([passkeys.assertionOptions("sign-in"), passkeys.assertionOptions("sign-in")]);
      const results = await Promise.allSettled([
        passkeys.completeSignIn(authenticator.assert(first, { counter })),
        passkeys.completeSignIn(authenticator.assert(second, { counter })),
      ]);
      assert.equal(results.filter((result) => result.status === "fulfilled").length, 1, "exactly one sign-in");
      const rejected = results.find((result): result is PromiseRejectedResult => result.status === "rejected")!;
      assert.equal(rejected.reason.code, "passkey_rejected");
      assert.match(rejected.reason.message, /counter/);
      assert.equal(await db().auditEvent.count({ where: { type: "user.signed_in", userId: user.id } }), 2);
    });

    it("refuses a sign-up from a wrong origin and creates no user", async () => {
      const authenticator = new SoftAuthenticator({ origin: APP_URL });
      const email = nextEmail("evil-signup");
      const creation = await passkeys.signUpOptions(email);
      const state = await snapshot();
      await rejectsWith(
        passkeys.completeSignUp(authenticator.register(creation, { origin: "https://evil.example" })),
        "passkey_rejected",
        /origin "https:\/\/evil\.example"/,
      );
      assert.deepEqual(await snapshot(), state);
      assert.equal(await db().user.count({ where: { email } }), 0);
      assert.ok((await challengeRow(creation.challenge)).usedAt);
    });

    it("refuses a sign-up without user verification, or for a wrong RP ID", async () => {
      for (const overrides of [{ flags: FLAGS.UP | FLAGS.AT }, { rpId: "evil.example" }]) {
        const authenticator = new SoftAuthenticator({ origin: APP_URL });
        const email = nextEmail("bad-signup");
        await rejectsWith(
          passkeys.completeSignUp(authenticator.register(await passkeys.signUpOptions(email), overrides)),
          "passkey_rejected",
        );
        assert.equal(await db().user.count({ where: { email } }), 0);
      }
    });
  });

  describe("removing and renaming passkeys", () => {
    async function withTwoPasskeys(label: string) {
      const { user, authenticator: first } = await signUp(label);
      const second = new SoftAuthenticator({ origin: APP_URL });
      await passkeys.completeAddPasskey(user.id, second.register(await passkeys.addPasskeyOptions(user.id)), "Second");
      return { user, first, second };
    }

    async function sealedCredential(userId: string, name: string, passkeyIds: string[]) {
      const id = `cr_test_${randomBytes(6).toString("hex")}`;
      await db().credential.create({
        data: {
          id,
          userId,
          name,
          kind: "evm",
          address: `0x${randomBytes(20).toString("hex")}`,
          seals: { create: passkeyIds.map((passkeyId) => ({ passkeyId, ...sealInput() })) },
        },
      });
      return id;
    }

    it("never removes the last passkey", async () => {
      const { user, authenticator } = await signUp("last");
      await rejectsWith(passkeys.removePasskey(user.id, authenticator.id), "last_passkey");
      assert.ok(await db().passkey.findUnique({ where: { id: authenticator.id } }));
    });

    it("refuses to remove the only passkey sealing a wallet key, then removes another with an audit event", async () => {
      const { user, first, second } = await withTwoPasskeys("holds");
      const onlyFirst = await sealedCredential(user.id, "Only first", [first.id]);
      const both = await sealedCredential(user.id, "Both", [first.id, second.id]);
      await db().credential.create({
        data: {
          id: `cr_watch_${randomBytes(6).toString("hex")}`,
          userId: user.id,
          name: "Watch",
          kind: "evm_watch",
          address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        },
      });

      const state = await snapshot();
      await rejectsWith(passkeys.removePasskey(user.id, first.id), "passkey_holds_keys", /Only first/);
      assert.deepEqual(await snapshot(), state);

      await passkeys.removePasskey(user.id, second.id);
      assert.equal(await db().passkey.findUnique({ where: { id: second.id } }), null);
      assert.deepEqual(
        (await db().credentialSeal.findMany({ where: { credentialId: both } })).map((seal) => seal.passkeyId),
        [first.id],
      );
      assert.equal(await db().credentialSeal.count({ where: { credentialId: onlyFirst } }), 1);
      const event = await db().auditEvent.findFirst({ where: { type: "passkey.removed", userId: user.id } });
      assert.ok(event);
      assert.deepEqual(JSON.parse(event.data), { passkey: second.id });

      // the removed passkey can no longer sign in
      const options = await passkeys.assertionOptions("sign-in");
      await rejectsWith(passkeys.completeSignIn(second.assert(options)), "passkey_rejected", /not registered/);

      await rejectsWith(passkeys.removePasskey(user.id, first.id), "last_passkey");
    });

    it("removes a passkey when every wallet it seals is also sealed under another", async () => {
      const { user, first, second } = await withTwoPasskeys("shared");
      await sealedCredential(user.id, "Shared", [first.id, second.id]);
      await passkeys.removePasskey(user.id, first.id);
      assert.deepEqual(
        (await passkeys.listPasskeys(user.id)).map((passkey) => passkey.id),
        [second.id],
      );
    });

    it("does not remove or rename another user's passkey", async () => {
      const a = await signUp("owner");
      const b = await withTwoPasskeys("intruder");
      await rejectsWith(passkeys.renamePasskey(b.user.id, a.authenticator.id, "Mine now"), "not_found");
      await rejectsWith(passkeys.removePasskey(b.user.id, a.authenticator.id), "not_found");
      const passkey = await db().passkey.findUniqueOrThrow({ where: { id: a.authenticator.id } });
      assert.equal(passkey.name, "Passkey 1");
      assert.equal(passkey.userId, a.user.id);

      await passkeys.renamePasskey(a.user.id, a.authenticator.id, "  Phone  ");
      assert.equal((await db().passkey.findUniqueOrThrow({ where: { id: a.authenticator.id } })).name, "Phone");
      assert.ok(await db().auditEvent.findFirst({ where: { type: "passkey.renamed", userId: a.user.id } }));
    });
  });
});
