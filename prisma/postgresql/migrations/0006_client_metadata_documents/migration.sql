-- AlterTable
ALTER TABLE "Client" ADD COLUMN     "documentExpiresAt" TIMESTAMP(3),
ADD COLUMN     "documentFetchedAt" TIMESTAMP(3);

