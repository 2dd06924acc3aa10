// An allowance the agent asks for its own key, on PostgreSQL (the SQLite run: e2e/allowances/asked-allowance.test.ts).
import { askedAllowanceSuite } from "../support/asked-allowance-suite";

askedAllowanceSuite("postgres");
