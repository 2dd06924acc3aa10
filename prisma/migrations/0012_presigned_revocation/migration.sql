-- AlterTable
ALTER TABLE "Allowance" ADD COLUMN "revocationSignature" TEXT;
