-- AlterTable
ALTER TABLE "Allowance" ADD COLUMN     "revocationSentAt" TIMESTAMP(3);
