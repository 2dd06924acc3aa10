-- AlterTable
ALTER TABLE "RefreshToken" ADD COLUMN     "jkt" TEXT;

-- CreateTable
CREATE TABLE "DpopProof" (
    "jtiHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DpopProof_pkey" PRIMARY KEY ("jtiHash")
);

-- CreateIndex
CREATE INDEX "DpopProof_expiresAt_idx" ON "DpopProof"("expiresAt");
