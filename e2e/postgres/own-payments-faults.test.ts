// The agent's own payments read through a provider that caps, fails and reorgs, on PostgreSQL (the SQLite run:
// e2e/allowances/own-payments-faults.test.ts; the cases: e2e/support/own-payments-faults-suite.ts).
import { ownPaymentsFaultsSuite } from "../support/own-payments-faults-suite";

ownPaymentsFaultsSuite("postgres");
