-- AlterTable
ALTER TABLE "RelayedTransaction" ADD COLUMN "lineage" TEXT;
ALTER TABLE "RelayedTransaction" ADD COLUMN "cost" BIGINT;
ALTER TABLE "RelayedTransaction" ADD COLUMN "l1Fee" TEXT;

-- CreateIndex
CREATE INDEX "RelayedTransaction_lineage_idx" ON "RelayedTransaction"("lineage");
