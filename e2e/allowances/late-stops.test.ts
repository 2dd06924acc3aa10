// A payment stopped between its checks and its send, on SQLite (the PostgreSQL run: e2e/postgres/late-stops.test.ts).
import { lateStopSuite } from "../support/late-stops";

lateStopSuite("sqlite");
