// An allowance the agent asks for its own key, on a chain that mines a block every 2 seconds with a mempool, on
// PostgreSQL (the SQLite run: e2e/allowances/asked-allowance-blocks.test.ts; the cases: e2e/support/asked-allowance-suite.ts).
import { askedAllowanceSuite } from "../support/asked-allowance-suite";

askedAllowanceSuite("postgres", { blockMs: 2000 });
