-- AlterTable
ALTER TABLE "Allowance" ADD COLUMN "attention" TEXT;

-- CreateTable
CREATE TABLE "RelayedTransaction" (
    "hash" TEXT NOT NULL PRIMARY KEY,
    "chainId" INTEGER NOT NULL,
    "relayer" TEXT NOT NULL,
    "userId" TEXT,
    "allowanceId" TEXT,
    "purpose" TEXT NOT NULL,
    "gasLimit" INTEGER NOT NULL,
    "gasUsed" INTEGER,
    "feePaid" TEXT,
    "status" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "RelayedTransaction_userId_chainId_createdAt_idx" ON "RelayedTransaction"("userId", "chainId", "createdAt");

-- CreateIndex
CREATE INDEX "RelayedTransaction_chainId_createdAt_idx" ON "RelayedTransaction"("chainId", "createdAt");

