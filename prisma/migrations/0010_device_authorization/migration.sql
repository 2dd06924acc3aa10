-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_AuthorizationRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "clientId" TEXT NOT NULL,
    "redirectUri" TEXT,
    "codeChallenge" TEXT,
    "scope" TEXT NOT NULL,
    "state" TEXT,
    "resource" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL,
    "decidedAt" DATETIME,
    "outcome" TEXT,
    "deviceCodeHash" TEXT,
    "userCodeHash" TEXT,
    "pollInterval" INTEGER,
    "nextPollAt" DATETIME,
    "grantId" TEXT,
    "tokensIssuedAt" DATETIME
);
INSERT INTO "new_AuthorizationRequest" ("clientId", "codeChallenge", "createdAt", "decidedAt", "expiresAt", "id", "outcome", "redirectUri", "resource", "scope", "state") SELECT "clientId", "codeChallenge", "createdAt", "decidedAt", "expiresAt", "id", "outcome", "redirectUri", "resource", "scope", "state" FROM "AuthorizationRequest";
DROP TABLE "AuthorizationRequest";
ALTER TABLE "new_AuthorizationRequest" RENAME TO "AuthorizationRequest";
CREATE UNIQUE INDEX "AuthorizationRequest_deviceCodeHash_key" ON "AuthorizationRequest"("deviceCodeHash");
CREATE UNIQUE INDEX "AuthorizationRequest_userCodeHash_key" ON "AuthorizationRequest"("userCodeHash");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

