import { revocationRaceSuite } from "../support/revocation-race";

revocationRaceSuite("postgres");
