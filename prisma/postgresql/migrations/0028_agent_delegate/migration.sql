-- AlterTable
ALTER TABLE "Allowance" ADD COLUMN "delegateKind" TEXT NOT NULL DEFAULT 'server';
