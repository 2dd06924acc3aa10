-- CreateTable
CREATE TABLE "AgentAccount" (
    "allowanceId" TEXT NOT NULL PRIMARY KEY,
    "address" TEXT NOT NULL,
    "sealed" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "AgentAccount_allowanceId_fkey" FOREIGN KEY ("allowanceId") REFERENCES "Allowance" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "AgentAccount_address_key" ON "AgentAccount"("address");
