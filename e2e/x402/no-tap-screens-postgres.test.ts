// A no-tap x402 payment's own page and its audit rows, on PostgreSQL (the SQLite run: no-tap-screens.test.ts).
import { describe } from "node:test";
import { noTapScreens } from "../support/no-tap-screens";

describe("a no-tap x402 payment as the person sees it (PostgreSQL)", { timeout: 300_000 }, () => noTapScreens("postgres"));
