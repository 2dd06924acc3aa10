// The agent's own payments read through a provider that caps, fails and reorgs, on SQLite (the PostgreSQL run:
// e2e/postgres/own-payments-faults.test.ts; the cases: e2e/support/own-payments-faults-suite.ts).
import { ownPaymentsFaultsSuite } from "../support/own-payments-faults-suite";

ownPaymentsFaultsSuite("sqlite");
