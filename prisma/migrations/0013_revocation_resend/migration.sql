-- AlterTable
ALTER TABLE "Allowance" ADD COLUMN "revocationSentAt" DATETIME;
