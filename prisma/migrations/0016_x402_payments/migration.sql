-- CreateTable
CREATE TABLE "X402Payment" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "allowanceId" TEXT NOT NULL,
    "delegationHash" TEXT NOT NULL,
    "leafHash" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "payee" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "X402Payment_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "X402Payment_leafHash_key" ON "X402Payment"("leafHash");

-- CreateIndex
CREATE INDEX "X402Payment_allowanceId_status_idx" ON "X402Payment"("allowanceId", "status");
