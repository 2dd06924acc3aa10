-- AlterTable
ALTER TABLE "WebAuthnChallenge" ADD COLUMN     "allow" TEXT;

-- AlterTable
ALTER TABLE "AgentRequest" ADD COLUMN     "nonce" INTEGER,
ADD COLUMN     "nonceUntil" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "AgentRequest_credentialId_chainId_status_idx" ON "AgentRequest"("credentialId", "chainId", "status");

