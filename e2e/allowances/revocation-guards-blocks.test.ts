// The relayer's guards on revocations on a chain that mines a block every 2 seconds with a mempool, as real chains do,
// on SQLite (the cases: e2e/support/revocation-guards.ts).
import { revocationGuardSuite } from "../support/revocation-guards";

revocationGuardSuite("sqlite", { blockMs: 2000 });
