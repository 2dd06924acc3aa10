import { RateLimiterPrisma, RateLimiterRes } from "rate-limiter-flexible";
import { db, queryPastOrm } from "@/lib/db";

type Counter = { points: number; expire: Date | null };
type StoreOptions = ConstructorParameters<typeof RateLimiterPrisma>[0];

const SET_COUNTER = `INSERT INTO "RateLimit" ("key", "points", "expire") VALUES (?, ?, ?)
  ON CONFLICT ("key") DO UPDATE SET "points" = excluded."points", "expire" = excluded."expire"
  RETURNING "points", "expire"`;
/** An expired row starts a new window; any other is incremented in place. */
const ADD_TO_COUNTER = `INSERT INTO "RateLimit" ("key", "points", "expire") VALUES (?, ?, ?)
  ON CONFLICT ("key") DO UPDATE SET
    "points" = CASE WHEN "RateLimit"."expire" IS NULL OR "RateLimit"."expire" > ?
               THEN "RateLimit"."points" + excluded."points" ELSE excluded."points" END,
    "expire" = CASE WHEN "RateLimit"."expire" IS NULL OR "RateLimit"."expire" > ?
               THEN "RateLimit"."expire" ELSE excluded."expire" END
  RETURNING "points", "expire"`;

const GET_COUNTER = `SELECT "points", "expire" FROM "RateLimit" WHERE "key" = ? AND ("expire" IS NULL OR "expire" > ?)`;
const DELETE_COUNTER = `DELETE FROM "RateLimit" WHERE "key" = ? RETURNING "key"`;

/**
 * rate-limiter-flexible's Prisma store on the RateLimit table, with each of its queries one SQL statement. The
 * library's own spends two ORM queries per report (a delete of the expired row, then an upsert), about 650 µs of
 * CPU; the report here is one statement past the ORM (lib/db `queryPastOrm`): about 20 µs on SQLite against
 * 80–300 µs for the same statement through Prisma, and /mcp reports once every 25 calls (docs/performance.md).
 * Concurrent reports from several instances all count. Expired rows are deleted by the sweep (lib/db/sweep.ts),
 * not by a timer per limiter.
 */
export class DatabaseRateLimitStore extends RateLimiterPrisma {
  constructor(options: Omit<StoreOptions, "storeClient">) {
    super({ ...options, storeClient: db(), tableName: "rateLimit", clearExpiredByTimeout: false });
  }

  async _upsert(key: string, points: number, msDuration: number, forceExpire = false): Promise<Counter> {
    const now = new Date();
    const expire = msDuration > 0 ? new Date(now.getTime() + msDuration) : null;
    const [row] = forceExpire
      ? await queryPastOrm<Counter>(SET_COUNTER, [key, points, expire])
      : await queryPastOrm<Counter>(ADD_TO_COUNTER, [key, points, expire, now, now]);
    return row;
  }

  async _get(key: string): Promise<Counter | null> {
    const [row] = await queryPastOrm<Counter>(GET_COUNTER, [key, new Date()]);
    return row ?? null;
  }

  async _delete(key: string): Promise<boolean> {
    return (await queryPastOrm(DELETE_COUNTER, [key])).length > 0;
  }

  _getRateLimiterRes(_key: string, changedPoints: number, row: Counter): RateLimiterRes {
    const consumedPoints = Number(row.points);
    const msBeforeNext = row.expire === null ? -1 : Math.max(new Date(row.expire).getTime() - Date.now(), 0);
    return new RateLimiterRes(Math.max(this.points - consumedPoints, 0), msBeforeNext, consumedPoints, consumedPoints === changedPoints);
  }
}
