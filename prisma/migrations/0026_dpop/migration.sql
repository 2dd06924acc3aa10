-- AlterTable
ALTER TABLE "RefreshToken" ADD COLUMN "jkt" TEXT;

-- CreateTable
CREATE TABLE "DpopProof" (
    "jtiHash" TEXT NOT NULL PRIMARY KEY,
    "expiresAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "DpopProof_expiresAt_idx" ON "DpopProof"("expiresAt");
