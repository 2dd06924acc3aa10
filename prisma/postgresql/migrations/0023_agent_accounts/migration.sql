-- CreateTable
CREATE TABLE "AgentAccount" (
    "allowanceId" TEXT NOT NULL,
    "address" TEXT NOT NULL,
    "sealed" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AgentAccount_pkey" PRIMARY KEY ("allowanceId")
);

-- CreateIndex
CREATE UNIQUE INDEX "AgentAccount_address_key" ON "AgentAccount"("address");

-- AddForeignKey
ALTER TABLE "AgentAccount" ADD CONSTRAINT "AgentAccount_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance"("id") ON DELETE CASCADE ON UPDATE CASCADE;
