// The passkeys an approval asks for are the ones that sealed the wallet's key, and the server holds the
// ceremony to them: an assertion made by another passkey of the same account, answering the very challenge
// the approval issued, is refused, and the request stays pending for the right one.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { keyHolder, type KeyHolder } from "../support/key-holder";
import { addedPasskey } from "../support/session";
import type { SoftAuthenticator } from "../support/soft-authenticator";
import { db } from "@/lib/db";

describe("an approval's allow-list of passkeys, enforced by the server", () => {
  let app: RunningApp;
  let holder: KeyHolder;
  let other: SoftAuthenticator;

  before(async () => {
    app = await startApp();
    holder = await keyHolder(app, "two-passkeys@example.com");
    // A second passkey of the same account that did not seal the wallet's key.
    other = await addedPasskey(app, holder.person);
  });
  after(() => app.stop());

  it("refuses an assertion by a passkey the approval did not ask for, then accepts the sealing passkey's", async () => {
    const { requestId, refusal } = await holder.ask("sign_message", { message: "Only the sealing passkey" });
    assert.ok(requestId, refusal);
    const { body: options } = await holder.person.session.json<{ options: { allowCredentials: { id: string }[] } }>(
      `/api/approvals/${requestId}/options`,
    );
    assert.deepEqual(
      options.options.allowCredentials.map((entry) => entry.id),
      [holder.person.passkey.id],
      "the approval asks for the sealing passkey only",
    );

    const wrong = await (await holder.prepareApproval(requestId, other)).post();
    assert.equal(wrong.status, 403, JSON.stringify(wrong.body));
    assert.equal(wrong.body.error, "passkey_rejected");
    assert.match(String(wrong.body.message), /not one of those asked for/);
    const row = await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } });
    assert.equal(row.status, "pending", "nothing was decided");
    assert.equal(
      (await db().passkey.findUniqueOrThrow({ where: { id: other.id } })).counter,
      0,
      "the refused passkey's use was not recorded",
    );

    const right = await (await holder.prepareApproval(requestId)).post();
    assert.equal(right.status, 200, JSON.stringify(right.body));
    assert.equal(right.body.status, "completed");
  });

  // The session is confirmed in the same round trip as the challenge is spent: one that ended after the options
  // were asked for decides nothing, moves no passkey counter and records nothing for the request.
  it("refuses an approval posted with a session that ended after its options were asked for", async () => {
    const { requestId, refusal } = await holder.ask("sign_message", { message: "After signing out everywhere" });
    assert.ok(requestId, refusal);
    const prepared = await holder.prepareApproval(requestId);
    const counter = (await db().passkey.findUniqueOrThrow({ where: { id: holder.person.passkey.id } })).counter;
    const transitions = () => db().auditEvent.findMany({ where: { type: "request.transition", requestId } });
    const recorded = await transitions();
    assert.equal((await holder.person.session.json("/api/sessions/sign-out-everywhere")).status, 200);

    const refused = await prepared.post();
    assert.equal(refused.status, 401, JSON.stringify(refused.body));
    assert.equal(refused.body.error, "unauthenticated");
    assert.equal((await db().agentRequest.findUniqueOrThrow({ where: { id: requestId } })).status, "pending");
    assert.equal((await db().passkey.findUniqueOrThrow({ where: { id: holder.person.passkey.id } })).counter, counter);
    assert.deepEqual(await transitions(), recorded, "nothing more was recorded for the request");
  });
});
