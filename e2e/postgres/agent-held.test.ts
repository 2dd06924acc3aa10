// An allowance whose delegate key the agent holds, on PostgreSQL (the SQLite run: e2e/allowances/agent-held.test.ts).
import { agentHeldSuite } from "../support/agent-held-suite";

agentHeldSuite("postgres");
