import { policySuite } from "../support/policy-suite";

policySuite("sqlite");
