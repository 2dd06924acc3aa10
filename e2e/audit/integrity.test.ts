import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { createUser } from "../support/oauth";
import { db } from "@/lib/db";
import { recordAudit, verifyAuditChain } from "@/lib/audit";
import { eventHash } from "@/lib/audit/chain";
import { auditIntegrityFor } from "@/lib/audit/integrity";

describe("/audit's chain check: since the checkpoint, and every event of the person", () => {
  let app: RunningApp;
  let alice = "";
  let bob = "";

  async function eventOf(userId: string) {
    return db().auditEvent.findFirstOrThrow({ where: { userId }, orderBy: { seq: "asc" } });
  }

  /** Runs `check` with one row's data (and optionally its hash) replaced, then restores the row. */
  async function tampered(seq: number, change: { data: string; hash?: string }, check: () => Promise<void>) {
    const original = await db().auditEvent.findUniqueOrThrow({ where: { seq } });
    await db().auditEvent.update({ where: { seq }, data: { data: change.data, hash: change.hash ?? original.hash } });
    try {
      await check();
    } finally {
      await db().auditEvent.update({ where: { seq }, data: { data: original.data, hash: original.hash } });
    }
  }

  before(async () => {
    app = await startApp();
    alice = (await createUser()).id;
    bob = (await createUser()).id;
    for (let index = 0; index < 5; index++) {
      await recordAudit({ type: "credential.renamed", userId: alice, data: { name: `Alice ${index}` } });
      await recordAudit({ type: "credential.renamed", userId: bob, data: { name: `Bob ${index}` } });
    }
  });
  after(() => app?.stop());

  it("counts only the person's own events and moves the checkpoint to the verified head", async () => {
    assert.deepEqual(await auditIntegrityFor(alice), { ok: true, ownEvents: 5 });
    const head = await db().auditEvent.findFirstOrThrow({ orderBy: { seq: "desc" } });
    const checkpoint = await db().auditCheckpoint.findUniqueOrThrow({ where: { id: 1 } });
    assert.deepEqual({ seq: checkpoint.seq, hash: checkpoint.hash }, { seq: head.seq, hash: head.hash });
  });

  it("an altered event of the person is found even before the checkpoint, as is a forged hash (by its successor's link)", async () => {
    await auditIntegrityFor(alice);
    const own = await eventOf(alice);
    await tampered(own.seq, { data: JSON.stringify({ name: "Forged" }) }, async () => {
      assert.deepEqual(await auditIntegrityFor(alice), { ok: false, brokenAt: own.seq, reason: `event ${own.seq} was altered` });
    });
    const forged = { ...own, data: JSON.stringify({ name: "Forged" }) };
    await tampered(own.seq, { data: forged.data, hash: eventHash(forged) }, async () => {
      const result = await auditIntegrityFor(alice);
      assert.equal(result.ok, false);
      assert.equal(result.ok === false && result.brokenAt, own.seq + 1);
    });
    assert.deepEqual(await auditIntegrityFor(alice), { ok: true, ownEvents: 5 });
  });

  it("another person's event altered before the checkpoint is left to the full check; after it, it is found", async () => {
    await auditIntegrityFor(alice);
    const old = await eventOf(bob);
    await tampered(old.seq, { data: JSON.stringify({ name: "Forged" }) }, async () => {
      assert.deepEqual(await auditIntegrityFor(alice), { ok: true, ownEvents: 5 });
      const full = await verifyAuditChain();
      assert.equal(full.ok === false && full.brokenAt, old.seq);
    });

    await recordAudit({ type: "credential.renamed", userId: bob, data: { name: "Bob late" } });
    const late = await db().auditEvent.findFirstOrThrow({ orderBy: { seq: "desc" } });
    await tampered(late.seq, { data: JSON.stringify({ name: "Forged" }) }, async () => {
      assert.deepEqual(await auditIntegrityFor(alice), { ok: false, brokenAt: late.seq, reason: `event ${late.seq} was altered` });
    });
    assert.deepEqual(await auditIntegrityFor(alice), { ok: true, ownEvents: 5 });
  });
});
