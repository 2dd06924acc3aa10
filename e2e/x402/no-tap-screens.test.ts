// A no-tap x402 payment's own page and its audit rows, on SQLite (the PostgreSQL run: no-tap-screens-postgres.test.ts).
import { describe } from "node:test";
import { noTapScreens } from "../support/no-tap-screens";

describe("a no-tap x402 payment as the person sees it", { timeout: 300_000 }, () => noTapScreens("sqlite"));
