// Two instances on one PostgreSQL count every rate limit together (e2e/support/limits.ts).
import { sharedCountersSuite } from "../support/limits";

sharedCountersSuite("rate limits shared by two instances on one PostgreSQL", "postgres");
