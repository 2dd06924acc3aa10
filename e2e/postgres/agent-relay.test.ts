// Payments an agent's own key signs and the relayer sends, on PostgreSQL (the cases: e2e/support/agent-relay-suite.ts).
import { agentRelaySuite } from "../support/agent-relay-suite";

agentRelaySuite("postgres");
