// The relayer's guards on revocations, on SQLite (the cases: e2e/support/revocation-guards.ts).
import { revocationGuardSuite } from "../support/revocation-guards";

revocationGuardSuite("sqlite");
