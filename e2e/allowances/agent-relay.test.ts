// Payments an agent's own key signs and the relayer sends, on SQLite (the PostgreSQL run: e2e/postgres/agent-relay.test.ts).
import { agentRelaySuite } from "../support/agent-relay-suite";

agentRelaySuite("sqlite");
