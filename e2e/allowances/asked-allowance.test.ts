// An allowance the agent asks for its own key, on SQLite (the PostgreSQL run: e2e/postgres/asked-allowance.test.ts).
import { askedAllowanceSuite } from "../support/asked-allowance-suite";

askedAllowanceSuite("sqlite");
