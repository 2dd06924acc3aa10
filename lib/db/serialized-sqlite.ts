// Prisma's SQLite adapter runs every statement on one connection and serializes only its transactions with each
// other: a statement issued outside a transaction while one is open (across an await) runs inside it — it reads
// that transaction's uncommitted rows, and that transaction's rollback undoes it. A policy refusal rolls back, so a
// single-use challenge consumed or a request settled by another call in that window would come back. This wrapper
// makes every statement outside a transaction wait until no transaction is open.
import type { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { Mutex } from "async-mutex";

type Adapter = Awaited<ReturnType<PrismaBetterSQLite3["connect"]>>;
type Transaction = Awaited<ReturnType<Adapter["startTransaction"]>>;

export function serializedSqlite(factory: PrismaBetterSQLite3): PrismaBetterSQLite3 {
  return withOverrides(factory, { connect: async () => serialized(await factory.connect()) });
}

function serialized(adapter: Adapter): Adapter {
  const open = new Mutex();
  // A statement is synchronous in better-sqlite3, so one issued while no transaction is open runs before any can begin.
  const outside =
    <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      open.isLocked() ? open.runExclusive(() => run(...args)) : run(...args);
  const overrides: Partial<Adapter> = {
    queryRaw: outside(adapter.queryRaw.bind(adapter)),
    executeRaw: outside(adapter.executeRaw.bind(adapter)),
    executeScript: outside(adapter.executeScript.bind(adapter)),
    async startTransaction(isolationLevel) {
      const release = await open.acquire();
      try {
        return untilEnded(await adapter.startTransaction(isolationLevel), release);
      } catch (error) {
        release();
        throw error;
      }
    },
  };
  return withOverrides(adapter, overrides);
}

/** The transaction, releasing `release` once it has committed or rolled back (Prisma runs COMMIT or ROLLBACK first). */
function untilEnded(transaction: Transaction, release: () => void): Transaction {
  const ending = (end: () => Promise<void>) => async () => {
    try {
      await end();
    } finally {
      release();
    }
  };
  return withOverrides(transaction, {
    commit: ending(transaction.commit.bind(transaction)),
    rollback: ending(transaction.rollback.bind(transaction)),
  });
}

/** `target` with some of its methods replaced; the others still called on it. */
function withOverrides<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}
