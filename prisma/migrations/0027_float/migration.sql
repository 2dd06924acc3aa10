-- AlterTable
ALTER TABLE "AllowanceDelegation" ADD COLUMN "float" TEXT;

-- AlterTable
ALTER TABLE "X402Payment" ADD COLUMN "fromFloat" BOOLEAN NOT NULL DEFAULT false;
