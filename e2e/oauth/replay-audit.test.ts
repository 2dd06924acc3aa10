import { replayAuditSuite } from "../support/replay-audit-suite";

replayAuditSuite("sqlite");
