// Transaction scripts on SQLite: see e2e/support/transaction-script-cases.ts.
import { after, before, describe } from "node:test";
import { useTestDatabase, type TestDatabase } from "../support/database";
import { transactionScriptCases, type ScriptLib } from "../support/transaction-script-cases";

describe("transaction scripts (SQLite)", () => {
  let database: TestDatabase;
  let lib: ScriptLib;
  before(async () => {
    database = await useTestDatabase();
    lib = {
      scripts: await import("@/lib/db/transaction-script"),
      db: (await import("@/lib/db")).db,
      audit: await import("@/lib/audit"),
    };
  });
  after(() => database.cleanup());
  transactionScriptCases(() => lib);
});
