-- CreateTable
CREATE TABLE "AllowanceSlice" (
    "id" TEXT NOT NULL,
    "allowanceId" TEXT NOT NULL,
    "delegate" TEXT NOT NULL,
    "delegations" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AllowanceSlice_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AllowanceSlice_allowanceId_idx" ON "AllowanceSlice"("allowanceId");

-- AddForeignKey
ALTER TABLE "AllowanceSlice" ADD CONSTRAINT "AllowanceSlice_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AlterTable
ALTER TABLE "Allowance" ADD COLUMN "ownPaymentsFrom" INTEGER;
