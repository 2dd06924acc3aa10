// x402 by permit2 at a stock merchant from the agent's account, on SQLite (the suite: e2e/support/agent-account-permit2-suite.ts).
import { agentAccountPermit2Suite } from "../support/agent-account-permit2-suite";

agentAccountPermit2Suite("sqlite");
