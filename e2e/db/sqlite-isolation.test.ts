// On SQLite the ORM's statements share one connection: a statement outside a transaction must not run inside
// another call's open transaction (see lib/db/serialized-sqlite.ts), or that transaction's rollback undoes it and
// it reads rows that were never committed.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { useTestDatabase, type TestDatabase } from "../support/database";

describe("SQLite: statements outside a transaction", () => {
  let database: TestDatabase;
  let db: typeof import("@/lib/db").db;
  before(async () => {
    database = await useTestDatabase();
    ({ db } = await import("@/lib/db"));
  });
  after(() => database.cleanup());

  it("are not undone by another call's rollback, and do not read its uncommitted rows", async () => {
    await db().user.create({ data: { id: "existing", email: "existing@example.test" } });
    let openTransaction!: () => void;
    const opened = new Promise<void>((resolve) => (openTransaction = resolve));
    let endTransaction!: () => void;
    const ending = new Promise<void>((resolve) => (endTransaction = resolve));
    const refused = db()
      .$transaction(async (tx) => {
        await tx.user.create({ data: { id: "uncommitted", email: "uncommitted@example.test" } });
        openTransaction();
        await ending;
        throw new Error("refused");
      })
      .catch((error: Error) => error.message);
    await opened;

    // One statement each, as the rate-limit store's writes and most reads are: no implicit transaction of Prisma's.
    // (Prisma's promises run only once awaited: Promise.resolve starts them now.)
    const write = Promise.resolve(db().$executeRaw`UPDATE "User" SET "sessionVersion" = 7 WHERE "id" = 'existing'`);
    const read = Promise.resolve(db().user.findUnique({ where: { id: "uncommitted" } }));
    // Time for both to run if nothing holds them back (unserialized, they run inside the open transaction).
    await new Promise((resolve) => setTimeout(resolve, 500));
    endTransaction();

    assert.equal(await refused, "refused");
    await write;
    assert.equal(await read, null, "a read outside saw a row its transaction never committed");
    const users = await db().user.findMany({ select: { id: true, sessionVersion: true }, orderBy: { id: "asc" } });
    assert.deepEqual(users, [{ id: "existing", sessionVersion: 7 }], "the rollback undid a write made outside it");
  });

  it("still run at once while no transaction is open, and transactions still commit", async () => {
    await db().$transaction(async (tx) => {
      await tx.user.create({ data: { id: "committed", email: "committed@example.test" } });
    });
    await db().user.update({ where: { id: "committed" }, data: { sessionVersion: { increment: 1 } } });
    assert.equal((await db().user.findUniqueOrThrow({ where: { id: "committed" } })).sessionVersion, 1);
  });
});
