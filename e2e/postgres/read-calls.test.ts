// /mcp's read calls past the SDK on PostgreSQL (the suite and what it holds: e2e/support/read-calls-suite.ts).
import { readCallsSuite } from "../support/read-calls-suite";

readCallsSuite("postgres");
