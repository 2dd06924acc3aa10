// Payments in flight when the app is killed, on PostgreSQL (the SQLite run: e2e/allowances/crashed-payments.test.ts).
import { crashedPaymentsSuite } from "../support/crashed-payments";

crashedPaymentsSuite("postgres");
