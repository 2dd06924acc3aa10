import { flakyProviderSuite } from "../support/flaky-provider-suite";

flakyProviderSuite("postgres");
