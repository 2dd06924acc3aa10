-- AlterTable
ALTER TABLE "AgentRequest" ADD COLUMN "nativeValue" TEXT;
ALTER TABLE "AgentRequest" ADD COLUMN "tokenAddress" TEXT;
ALTER TABLE "AgentRequest" ADD COLUMN "tokenAmount" TEXT;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_GrantCredential" (
    "grantId" TEXT NOT NULL,
    "credentialId" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "policy" TEXT NOT NULL DEFAULT '{}',

    PRIMARY KEY ("grantId", "credentialId"),
    CONSTRAINT "GrantCredential_grantId_fkey" FOREIGN KEY ("grantId") REFERENCES "Grant" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "GrantCredential_credentialId_fkey" FOREIGN KEY ("credentialId") REFERENCES "Credential" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_GrantCredential" ("credentialId", "grantId", "mode") SELECT "credentialId", "grantId", "mode" FROM "GrantCredential";
DROP TABLE "GrantCredential";
ALTER TABLE "new_GrantCredential" RENAME TO "GrantCredential";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "AgentRequest_grantId_credentialId_createdAt_idx" ON "AgentRequest"("grantId", "credentialId", "createdAt");

