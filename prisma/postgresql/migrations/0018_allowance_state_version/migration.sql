-- AlterTable
ALTER TABLE "Allowance" ADD COLUMN     "stateVersion" INTEGER NOT NULL DEFAULT 0;
