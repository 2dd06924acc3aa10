// An allowance the agent asks for its own key, on a chain that mines a block every 2 seconds with a mempool, on SQLite
// (the PostgreSQL run: e2e/postgres/asked-allowance-blocks.test.ts; the cases: e2e/support/asked-allowance-suite.ts).
import { askedAllowanceSuite } from "../support/asked-allowance-suite";

askedAllowanceSuite("sqlite", { blockMs: 2000 });
