// Payments from an allowance through a fee spike on 2-second blocks, on SQLite (the cases: e2e/support/fee-spike-suite.ts).
import { feeSpikeSuite } from "../support/fee-spike-suite";

feeSpikeSuite("sqlite");
