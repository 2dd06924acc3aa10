// Idempotency keys of the payment and signature tools on SQLite (the PostgreSQL run: e2e/postgres/idempotency.test.ts).
import { idempotencySuite } from "../support/idempotency-suite";

idempotencySuite("sqlite");
