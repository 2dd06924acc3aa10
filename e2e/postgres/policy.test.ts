import { policySuite } from "../support/policy-suite";

policySuite("postgres");
