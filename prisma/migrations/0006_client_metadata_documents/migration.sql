-- AlterTable
ALTER TABLE "Client" ADD COLUMN "documentExpiresAt" DATETIME;
ALTER TABLE "Client" ADD COLUMN "documentFetchedAt" DATETIME;

