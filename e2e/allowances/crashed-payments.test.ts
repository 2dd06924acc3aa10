// Payments in flight when the app is killed, on SQLite (the PostgreSQL run: e2e/postgres/crashed-payments.test.ts).
import { crashedPaymentsSuite } from "../support/crashed-payments";

crashedPaymentsSuite("sqlite");
