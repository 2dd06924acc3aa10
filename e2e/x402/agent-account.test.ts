// x402 at a stock merchant from the agent's account, on SQLite (the suite: e2e/support/agent-account-suite.ts).
import { agentAccountSuite } from "../support/agent-account-suite";

agentAccountSuite("sqlite");
