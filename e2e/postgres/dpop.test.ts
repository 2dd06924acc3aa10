import { dpopSuite } from "../support/dpop-suite";

dpopSuite("postgres");
