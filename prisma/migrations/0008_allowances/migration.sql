-- CreateTable
CREATE TABLE "Allowance" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "userId" TEXT NOT NULL,
    "credentialId" TEXT NOT NULL,
    "grantId" TEXT,
    "chainId" INTEGER NOT NULL,
    "delegator" TEXT NOT NULL,
    "delegate" TEXT NOT NULL,
    "overLimit" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" DATETIME,
    "revocationTx" TEXT
);

-- CreateTable
CREATE TABLE "AllowanceDelegation" (
    "hash" TEXT NOT NULL PRIMARY KEY,
    "allowanceId" TEXT NOT NULL,
    "token" TEXT,
    "signed" TEXT NOT NULL,
    CONSTRAINT "AllowanceDelegation_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "AllowanceSpend" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "allowanceId" TEXT NOT NULL,
    "delegationHash" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "token" TEXT,
    "amount" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "txHash" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AllowanceSpend_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "DelegateKey" (
    "address" TEXT NOT NULL PRIMARY KEY,
    "sealed" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Lease" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "holder" TEXT NOT NULL,
    "until" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "Allowance_userId_idx" ON "Allowance"("userId");

-- CreateIndex
CREATE INDEX "Allowance_grantId_idx" ON "Allowance"("grantId");

-- CreateIndex
CREATE INDEX "AllowanceDelegation_allowanceId_idx" ON "AllowanceDelegation"("allowanceId");

-- CreateIndex
CREATE INDEX "AllowanceSpend_allowanceId_createdAt_idx" ON "AllowanceSpend"("allowanceId", "createdAt");

