-- CreateIndex
CREATE INDEX "AgentRequest_grantId_credentialId_status_expiresAt_idx" ON "AgentRequest"("grantId", "credentialId", "status", "expiresAt");
