-- AlterTable
ALTER TABLE "RelayedTransaction" ADD COLUMN "nonce" INTEGER;
ALTER TABLE "RelayedTransaction" ADD COLUMN "raw" TEXT;

-- CreateIndex
CREATE INDEX "RelayedTransaction_status_idx" ON "RelayedTransaction"("status");
