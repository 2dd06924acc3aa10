-- CreateTable
CREATE TABLE "X402Payment" (
    "id" TEXT NOT NULL,
    "allowanceId" TEXT NOT NULL,
    "delegationHash" TEXT NOT NULL,
    "leafHash" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "payee" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "X402Payment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "X402Payment_leafHash_key" ON "X402Payment"("leafHash");

-- CreateIndex
CREATE INDEX "X402Payment_allowanceId_status_idx" ON "X402Payment"("allowanceId", "status");

-- AddForeignKey
ALTER TABLE "X402Payment" ADD CONSTRAINT "X402Payment_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance"("id") ON DELETE CASCADE ON UPDATE CASCADE;
