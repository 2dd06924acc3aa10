// Passkey step-up over HTTP against the started app, with a real next-auth
// session cookie and the software authenticator: every account operation a
// stolen session could abuse is refused with the cookie alone (403, nothing
// changed, a step_up.refused event), an approval is good only for its own
// operation, subject and content, and removing a passkey or "Sign out
// everywhere" ends the other sessions.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { startApp, type RunningApp } from "../support/app";
import { SoftAuthenticator } from "../support/soft-authenticator";
import { addedPasskey, Session, signedUpSession } from "../support/session";
import { db } from "@/lib/db";

type Person = { userId: string; session: Session; passkey: SoftAuthenticator };

describe("passkey step-up for account operations", () => {
  let app: RunningApp;
  let people = 0;

  before(async () => {
    app = await startApp();
  });
  after(() => app.stop());

  async function signUp(): Promise<Person> {
    return signedUpSession(app, `step-up-${++people}@example.com`);
  }

  async function signInAgain(person: Person): Promise<Session> {
    const session = new Session(app);
    const { body: options } = await session.json<{ challenge: string }>("/api/webauthn/sign-in");
    await session.complete("sign-in", person.passkey.assert(options));
    return session;
  }

  /** The approval for one operation: its options route, answered by `passkey`. */
  async function approve(person: Person, optionsPath: string, body: unknown = {}, passkey = person.passkey) {
    const { status, body: answer } = await person.session.json<{ challenge: string } | { options: { challenge: string } }>(
      optionsPath,
      body,
    );
    assert.equal(status, 200, JSON.stringify(answer));
    // A client's revocation sends its challenge beside the allowances the same tap may disable.
    return passkey.assert("options" in answer ? answer.options : answer) as AuthenticationResponseJSON;
  }

  const addPasskey = (person: Person) => addedPasskey(app, person);

  async function sealedWallet(userId: string, passkeyIds: string[], name = "Main") {
    return db().credential.create({
      data: {
        id: `cr_${randomBytes(8).toString("hex")}`,
        userId,
        name,
        kind: "evm",
        address: `0x${randomBytes(20).toString("hex")}`,
        seals: { create: passkeyIds.map((passkeyId) => ({ passkeyId, ...sealInput() })) },
      },
    });
  }

  const sealInput = () => ({
    ciphertext: randomBytes(48).toString("base64url"),
    iv: randomBytes(12).toString("base64url"),
    prfSalt: randomBytes(32).toString("base64url"),
  });

  async function issueKey(person: Person, credentialId: string, mode: "read" | "approve" = "read") {
    const request = { name: "Deploy bot", credentials: [{ credentialId, mode }] };
    const assertion = await approve(person, "/api/api-keys/options", request);
    const issued = await person.session.json<{ clientId: string }>("/api/api-keys", { ...request, assertion });
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    return issued.body.clientId;
  }

  /** Everything a refused operation must leave alone. */
  async function accountState(userId: string) {
    const [passkeys, credentials, seals, clients, grants, policies, contacts] = await Promise.all([
      db().passkey.findMany({ where: { userId }, orderBy: { id: "asc" }, select: { id: true, name: true } }),
      db().credential.findMany({ where: { userId }, orderBy: { id: "asc" } }),
      db().credentialSeal.findMany({ where: { credential: { userId } }, orderBy: [{ credentialId: "asc" }, { passkeyId: "asc" }] }),
      db().client.findMany({ where: { userId }, orderBy: { id: "asc" }, select: { id: true, status: true } }),
      db().grant.findMany({ where: { userId }, orderBy: { id: "asc" }, select: { id: true, status: true } }),
      db().grantCredential.findMany({ where: { grant: { userId } }, orderBy: [{ grantId: "asc" }, { credentialId: "asc" }] }),
      db().addressBookEntry.findMany({ where: { userId }, orderBy: { address: "asc" } }),
    ]);
    return { passkeys, credentials, seals, clients, grants, policies, contacts };
  }

  async function refusals(userId: string) {
    const events = await db().auditEvent.findMany({ where: { userId, type: "step_up.refused" }, orderBy: { seq: "asc" } });
    return events.map((event) => JSON.parse(event.data) as { operation: string; subject: string; reason: string });
  }

  /** `call` starts only once the state before it is read: a refusal recorded meanwhile would count as "before". */
  async function expectRefused(person: Person, call: () => Promise<{ status: number; body: Record<string, unknown> }>, operation: string) {
    const before = await accountState(person.userId);
    const refusedBefore = (await refusals(person.userId)).length;
    const { status, body } = await call();
    assert.equal(status, 403, `${operation}: ${JSON.stringify(body)}`);
    assert.equal(body.error, "step_up_required");
    assert.match(String(body.message), /needs a fresh approval with one of your passkeys/);
    assert.deepEqual(await accountState(person.userId), before, `${operation} changed nothing`);
    const events = await refusals(person.userId);
    assert.equal(events.length, refusedBefore + 1, `${operation}: one step_up.refused event`);
    assert.equal(events.at(-1)!.operation, operation);
    const raw = await db().auditEvent.findFirstOrThrow({
      where: { userId: person.userId, type: "step_up.refused" },
      orderBy: { seq: "desc" },
    });
    assert.doesNotMatch(raw.data, /signature|clientDataJSON|authenticatorData/, "no part of an assertion is logged");
  }

  it("refuses every guarded operation made with the session cookie alone", async () => {
    const person = await signUp();
    const second = await addPasskey(person);
    const wallet = await sealedWallet(person.userId, [person.passkey.id]);
    const clientId = await issueKey(person, wallet.id, "approve");
    const { id: grantId } = await db().grant.findFirstOrThrow({ where: { clientId } });
    const { session } = person;

    await expectRefused(person, () => session.json("/api/passkeys/options", {}), "approve-add-passkey");
    await expectRefused(
      person,
      () => session.json(`/api/grants/${grantId}/policy`, { credential_id: wallet.id, policy: { native: { per_day: "1" } } }, "PUT"),
      "change-policy",
    );
    await expectRefused(person, () => session.json(`/api/passkeys/${second.id}`, { name: "Stolen" }, "PATCH"), "rename-passkey");
    await expectRefused(person, () => session.json(`/api/passkeys/${second.id}`, {}, "DELETE"), "remove-passkey");
    await expectRefused(person, () => session.json(`/api/credentials/${wallet.id}/seals`, { seal: sealInput() }), "seal");
    await expectRefused(person, () => session.json(`/api/credentials/${wallet.id}`, {}, "DELETE"), "remove-wallet");
    await expectRefused(person, () => session.json(`/api/credentials/${wallet.id}`, { name: "Stolen" }, "PATCH"), "rename-wallet");
    await expectRefused(
      person,
      () => session.json("/api/api-keys", { name: "Exfiltrate", credentials: [{ credentialId: wallet.id, mode: "approve" }] }),
      "api-key",
    );
    await expectRefused(person, () => session.json(`/api/clients/${clientId}/revoke`, {}), "revoke-client");
    await expectRefused(
      person,
      () => session.json("/api/address-book", { address: wallet.address, label: "Savings" }, "PUT"),
      "address-book",
    );
    assert.equal(await session.signedIn(), true, "a refusal does not end the session");
  });

  it("accepts an approval only for its own operation, subject and content", async () => {
    const person = await signUp();
    const second = await addPasskey(person);
    const main = await sealedWallet(person.userId, [person.passkey.id, second.id], "Main");
    const spare = await sealedWallet(person.userId, [person.passkey.id, second.id], "Spare");
    const { session } = person;
    const passkeyPath = `/api/passkeys/${second.id}`;

    const renameToPhone = await approve(person, `${passkeyPath}/options`, { action: "rename", name: "Phone" });
    await expectRefused(person, () => session.json(passkeyPath, { assertion: renameToPhone }, "DELETE"), "remove-passkey");

    const renameToLaptop = await approve(person, `${passkeyPath}/options`, { action: "rename", name: "Laptop" });
    await expectRefused(
      person,
      () => session.json(passkeyPath, { name: "Attacker", assertion: renameToLaptop }, "PATCH"),
      "rename-passkey",
    );

    const removeMain = await approve(person, `/api/credentials/${main.id}/options`, { action: "remove" });
    await expectRefused(person, () => session.json(`/api/credentials/${spare.id}`, { assertion: removeMain }, "DELETE"), "remove-wallet");

    // A wallet's name is approved for exactly its text (names appear in approval headlines), and not by a removal's approval.
    const renameToVault = await approve(person, `/api/credentials/${main.id}/options`, { action: "rename", name: "Vault" });
    await expectRefused(
      person,
      () => session.json(`/api/credentials/${main.id}`, { name: "Send all to Mallory", assertion: renameToVault }, "PATCH"),
      "rename-wallet",
    );
    const removeMainAgain = await approve(person, `/api/credentials/${main.id}/options`, { action: "remove" });
    await expectRefused(
      person,
      () => session.json(`/api/credentials/${main.id}`, { name: "Vault", assertion: removeMainAgain }, "PATCH"),
      "rename-wallet",
    );
    const renameMain = await approve(person, `/api/credentials/${main.id}/options`, { action: "rename", name: "Vault" });
    assert.equal((await session.json(`/api/credentials/${main.id}`, { name: "Vault", assertion: renameMain }, "PATCH")).status, 200);
    assert.equal((await db().credential.findUniqueOrThrow({ where: { id: main.id } })).name, "Vault");
    await expectRefused(
      person,
      () => session.json(`/api/credentials/${main.id}`, { name: "Vault", assertion: renameMain }, "PATCH"),
      "rename-wallet",
    );

    const removeSpare = await approve(person, `/api/credentials/${spare.id}/options`, { action: "remove" });
    const clientId = await issueKey(person, main.id, "approve");
    // A policy change is approved for exactly its rules: an approval of a cap of 1 wei cannot lift every limit.
    const { id: grantId } = await db().grant.findFirstOrThrow({ where: { clientId } });
    const policyPath = `/api/grants/${grantId}/policy`;
    const tight = { credential_id: main.id, policy: { native: { per_transaction: "1" } } };
    const tightApproval = await approve(person, `${policyPath}/options`, tight);
    await expectRefused(person, () => session.json(policyPath, { ...tight, policy: {}, assertion: tightApproval }, "PUT"), "change-policy");
    const tightAgain = await approve(person, `${policyPath}/options`, tight);
    assert.equal((await session.json(policyPath, { ...tight, assertion: tightAgain }, "PUT")).status, 200);
    const entry = await db().grantCredential.findUniqueOrThrow({ where: { grantId_credentialId: { grantId, credentialId: main.id } } });
    assert.deepEqual(JSON.parse(entry.policy), tight.policy);
    const changed = await db().auditEvent.findFirstOrThrow({ where: { userId: person.userId, type: "policy.changed" } });
    assert.deepEqual(JSON.parse(changed.data), { grant: grantId, from: "{}", to: JSON.stringify(tight.policy) });
    await expectRefused(person, () => session.json(`/api/clients/${clientId}/revoke`, { assertion: removeSpare }), "revoke-client");

    // The matching approvals work, once each.
    const rename = await approve(person, `${passkeyPath}/options`, { action: "rename", name: "Laptop" });
    assert.equal((await session.json(passkeyPath, { name: "Laptop", assertion: rename }, "PATCH")).status, 200);
    assert.equal((await db().passkey.findUniqueOrThrow({ where: { id: second.id } })).name, "Laptop");
    await expectRefused(person, () => session.json(passkeyPath, { name: "Laptop", assertion: rename }, "PATCH"), "rename-passkey");

    // A name is approved for exactly its address and text: an approval of "Alice" cannot name it "Savings".
    const alice = { address: spare.address, label: "Alice" };
    const nameAlice = await approve(person, "/api/address-book/options", alice);
    await expectRefused(
      person,
      () => session.json("/api/address-book", { ...alice, label: "Savings", assertion: nameAlice }, "PUT"),
      "address-book",
    );

    const revoke = await approve(person, `/api/clients/${clientId}/revoke/options`);
    assert.equal((await session.json(`/api/clients/${clientId}/revoke`, { assertion: revoke })).status, 200);
    assert.equal((await db().client.findUniqueOrThrow({ where: { id: clientId } })).status, "revoked");

    const remove = await approve(person, `/api/credentials/${spare.id}/options`, { action: "remove" });
    assert.equal((await session.json(`/api/credentials/${spare.id}`, { assertion: remove }, "DELETE")).status, 200);
    assert.equal(await db().credential.findUnique({ where: { id: spare.id } }), null);
  });

  it("refuses an approval by another account's passkey", async () => {
    const person = await signUp();
    const other = await signUp();
    const wallet = await sealedWallet(person.userId, [person.passkey.id]);
    const { body: options } = await person.session.json<{ challenge: string }>(`/api/credentials/${wallet.id}/options`, {
      action: "remove",
    });
    const foreign = other.passkey.assert(options);
    await expectRefused(
      person,
      () => person.session.json(`/api/credentials/${wallet.id}`, { assertion: foreign }, "DELETE"),
      "remove-wallet",
    );
  });

  it("removing a passkey ends every other session, and keeps the acting one", async () => {
    const person = await signUp();
    const second = await addPasskey(person);
    const other = await signInAgain(person);
    assert.equal(await other.signedIn(), true);

    const assertion = await approve(person, `/api/passkeys/${second.id}/options`, { action: "remove" });
    const removed = await person.session.json(`/api/passkeys/${second.id}`, { assertion }, "DELETE");
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.equal(await db().passkey.findUnique({ where: { id: second.id } }), null);
    assert.equal(await other.signedIn(), false, "the other session ended");
    assert.equal(await person.session.signedIn(), true, "the acting session stays signed in");
  });

  it("refuses removing the last passkey that unlocks a wallet, naming the wallet", async () => {
    const person = await signUp();
    const second = await addPasskey(person);
    await sealedWallet(person.userId, [person.passkey.id, second.id], "Shared");
    await sealedWallet(person.userId, [second.id], "Only on laptop");
    const assertion = await approve(person, `/api/passkeys/${second.id}/options`, { action: "remove" });
    const refused = await person.session.json(`/api/passkeys/${second.id}`, { assertion }, "DELETE");
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error, "passkey_holds_keys");
    assert.match(String(refused.body.message), /Only this passkey can unlock Only on laptop\./);
    assert.ok(await db().passkey.findUnique({ where: { id: second.id } }));
  });

  it("signing out everywhere ends every session of the account, and signing out ends the others", async () => {
    const person = await signUp();
    const other = await signInAgain(person);
    const third = await signInAgain(person);
    assert.equal((await person.session.json("/api/sessions/sign-out-everywhere")).status, 200);
    for (const session of [person.session, other, third]) assert.equal(await session.signedIn(), false);
    assert.ok(await db().auditEvent.findFirst({ where: { userId: person.userId, type: "session.ended_everywhere" } }));

    const again = await signInAgain(person);
    const stolen = await signInAgain(person);
    const { csrfToken } = (await (await again.request("/api/auth/csrf", { method: "GET" })).json()) as { csrfToken: string };
    await again.request("/api/auth/signout", { form: { csrfToken, json: "true" } });
    assert.equal(await stolen.signedIn(), false, "a copy of a session ends when its person signs out");
  });
});
