// The agent's own side of an x402 payment on SQLite: the SDK and the CLI refuse, with nothing signed, a requirement
// above the most per payment, one for another resource or tool, and one beforePay refuses (PostgreSQL:
// agent-guard-postgres.test.ts; the cases: e2e/support/agent-guard-suite.ts).
import { agentGuardSuite } from "../support/agent-guard-suite";

agentGuardSuite("sqlite");
