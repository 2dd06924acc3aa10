-- AlterTable
ALTER TABLE "AgentRequest" ADD COLUMN     "idempotencyHash" TEXT,
ADD COLUMN     "idempotencyKey" TEXT,
ADD COLUMN     "idempotencyTool" TEXT,
ADD COLUMN     "toolAnswer" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "AgentRequest_grantId_idempotencyTool_idempotencyKey_key" ON "AgentRequest"("grantId", "idempotencyTool", "idempotencyKey");
