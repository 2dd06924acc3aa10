-- AlterTable
ALTER TABLE "AllowanceDelegation" ADD COLUMN     "perPaymentMax" TEXT;
