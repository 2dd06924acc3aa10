-- CreateTable
CREATE TABLE "AllowanceSlice" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "allowanceId" TEXT NOT NULL,
    "delegate" TEXT NOT NULL,
    "delegations" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AllowanceSlice_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "AllowanceSlice_allowanceId_idx" ON "AllowanceSlice"("allowanceId");

-- AlterTable
ALTER TABLE "Allowance" ADD COLUMN "ownPaymentsFrom" INTEGER;
