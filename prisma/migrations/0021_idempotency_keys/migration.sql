-- AlterTable
ALTER TABLE "AgentRequest" ADD COLUMN "idempotencyHash" TEXT;
ALTER TABLE "AgentRequest" ADD COLUMN "idempotencyKey" TEXT;
ALTER TABLE "AgentRequest" ADD COLUMN "idempotencyTool" TEXT;
ALTER TABLE "AgentRequest" ADD COLUMN "toolAnswer" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "AgentRequest_grantId_idempotencyTool_idempotencyKey_key" ON "AgentRequest"("grantId", "idempotencyTool", "idempotencyKey");
