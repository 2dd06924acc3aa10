-- AlterTable
ALTER TABLE "GrantCredential" ADD COLUMN     "policy" TEXT NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "AgentRequest" ADD COLUMN     "nativeValue" TEXT,
ADD COLUMN     "tokenAddress" TEXT,
ADD COLUMN     "tokenAmount" TEXT;

-- CreateIndex
CREATE INDEX "AgentRequest_grantId_credentialId_createdAt_idx" ON "AgentRequest"("grantId", "credentialId", "createdAt");

