// The relayer's guards on revocations, on PostgreSQL (the cases: e2e/support/revocation-guards.ts).
import { revocationGuardSuite } from "../support/revocation-guards";

revocationGuardSuite("postgres");
