import { replayAuditSuite } from "../support/replay-audit-suite";

replayAuditSuite("postgres");
