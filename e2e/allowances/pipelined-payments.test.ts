// Payments from allowances side by side on 2-second blocks, on SQLite (the cases: e2e/support/pipelined-payments-suite.ts).
import { pipelinedPaymentsSuite } from "../support/pipelined-payments-suite";

pipelinedPaymentsSuite("sqlite");
