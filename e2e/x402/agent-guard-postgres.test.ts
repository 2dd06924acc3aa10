// The agent's own side of an x402 payment on PostgreSQL (SQLite: agent-guard.test.ts; the cases:
// e2e/support/agent-guard-suite.ts).
import { agentGuardSuite } from "../support/agent-guard-suite";

agentGuardSuite("postgres");
