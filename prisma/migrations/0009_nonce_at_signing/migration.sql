-- AlterTable
ALTER TABLE "WebAuthnChallenge" ADD COLUMN "allow" TEXT;

-- AlterTable
ALTER TABLE "AgentRequest" ADD COLUMN "nonce" INTEGER;
ALTER TABLE "AgentRequest" ADD COLUMN "nonceUntil" DATETIME;

-- CreateIndex
CREATE INDEX "AgentRequest_credentialId_chainId_status_idx" ON "AgentRequest"("credentialId", "chainId", "status");

