// x402 from the agent account's float, on PostgreSQL (the suite: e2e/support/agent-account-float-suite.ts).
import { agentAccountFloatSuite } from "../support/agent-account-float-suite";

agentAccountFloatSuite("postgres");
