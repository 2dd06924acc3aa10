-- CreateIndex
CREATE INDEX "AgentRequest_status_idx" ON "AgentRequest"("status");

-- CreateIndex
CREATE INDEX "AllowanceSpend_status_idx" ON "AllowanceSpend"("status");
