// /mcp's read calls past the SDK on SQLite (the suite and what it holds: e2e/support/read-calls-suite.ts).
import { readCallsSuite } from "../support/read-calls-suite";

readCallsSuite("sqlite");
