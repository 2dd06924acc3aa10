// Two instances on one SQLite file count every rate limit together in its RateLimit table (e2e/support/limits.ts).
import { sharedCountersSuite } from "../support/limits";

sharedCountersSuite("rate limits shared by two instances on one SQLite file", "sqlite");
