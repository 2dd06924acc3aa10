import { flakyProviderSuite } from "../support/flaky-provider-suite";

flakyProviderSuite("sqlite");
