-- AlterTable
ALTER TABLE "AgentAccount" ADD COLUMN "returnedAt" TIMESTAMP(3);
