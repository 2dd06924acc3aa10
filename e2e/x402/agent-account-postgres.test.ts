// x402 at a stock merchant from the agent's account, on PostgreSQL (the suite: e2e/support/agent-account-suite.ts).
import { agentAccountSuite } from "../support/agent-account-suite";

agentAccountSuite("postgres");
