// With REDIS_URL, two instances count every rate limit together in Redis (e2e/support/limits.ts).
import { sharedCountersSuite } from "../support/limits";

sharedCountersSuite("rate limits shared by two instances through Redis (REDIS_URL)", "redis");
