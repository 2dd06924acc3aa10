-- AlterTable
ALTER TABLE "AgentAccount" ADD COLUMN "returnedAt" DATETIME;
