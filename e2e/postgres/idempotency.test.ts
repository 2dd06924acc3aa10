// Idempotency keys of the payment and signature tools on PostgreSQL, where concurrent calls with one key meet at the
// shared database's unique index (the SQLite run: e2e/mcp/idempotency.test.ts).
import { idempotencySuite } from "../support/idempotency-suite";

idempotencySuite("postgres");
