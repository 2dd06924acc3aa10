// A payment stopped between its checks and its send, on PostgreSQL (the SQLite run: e2e/allowances/late-stops.test.ts).
import { lateStopSuite } from "../support/late-stops";

lateStopSuite("postgres");
