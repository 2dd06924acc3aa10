-- CreateTable
CREATE TABLE "Allowance" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "credentialId" TEXT NOT NULL,
    "grantId" TEXT,
    "chainId" INTEGER NOT NULL,
    "delegator" TEXT NOT NULL,
    "delegate" TEXT NOT NULL,
    "overLimit" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" TIMESTAMP(3),
    "revocationTx" TEXT,

    CONSTRAINT "Allowance_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AllowanceDelegation" (
    "hash" TEXT NOT NULL,
    "allowanceId" TEXT NOT NULL,
    "token" TEXT,
    "signed" TEXT NOT NULL,

    CONSTRAINT "AllowanceDelegation_pkey" PRIMARY KEY ("hash")
);

-- CreateTable
CREATE TABLE "AllowanceSpend" (
    "id" TEXT NOT NULL,
    "allowanceId" TEXT NOT NULL,
    "delegationHash" TEXT NOT NULL,
    "recipient" TEXT NOT NULL,
    "token" TEXT,
    "amount" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "txHash" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AllowanceSpend_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DelegateKey" (
    "address" TEXT NOT NULL,
    "sealed" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DelegateKey_pkey" PRIMARY KEY ("address")
);

-- CreateTable
CREATE TABLE "Lease" (
    "key" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "until" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Lease_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "Allowance_userId_idx" ON "Allowance"("userId");

-- CreateIndex
CREATE INDEX "Allowance_grantId_idx" ON "Allowance"("grantId");

-- CreateIndex
CREATE INDEX "AllowanceDelegation_allowanceId_idx" ON "AllowanceDelegation"("allowanceId");

-- CreateIndex
CREATE INDEX "AllowanceSpend_allowanceId_createdAt_idx" ON "AllowanceSpend"("allowanceId", "createdAt");

-- AddForeignKey
ALTER TABLE "AllowanceDelegation" ADD CONSTRAINT "AllowanceDelegation_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AllowanceSpend" ADD CONSTRAINT "AllowanceSpend_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance"("id") ON DELETE CASCADE ON UPDATE CASCADE;

