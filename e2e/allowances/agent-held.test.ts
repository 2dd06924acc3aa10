// An allowance whose delegate key the agent holds, on SQLite (the PostgreSQL run: e2e/postgres/agent-held.test.ts).
import { agentHeldSuite } from "../support/agent-held-suite";

agentHeldSuite("sqlite");
