-- AlterTable
ALTER TABLE "AuthorizationRequest" ADD COLUMN     "deviceCodeHash" TEXT,
ADD COLUMN     "grantId" TEXT,
ADD COLUMN     "nextPollAt" TIMESTAMP(3),
ADD COLUMN     "pollInterval" INTEGER,
ADD COLUMN     "tokensIssuedAt" TIMESTAMP(3),
ADD COLUMN     "userCodeHash" TEXT,
ALTER COLUMN "redirectUri" DROP NOT NULL,
ALTER COLUMN "codeChallenge" DROP NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "AuthorizationRequest_deviceCodeHash_key" ON "AuthorizationRequest"("deviceCodeHash");

-- CreateIndex
CREATE UNIQUE INDEX "AuthorizationRequest_userCodeHash_key" ON "AuthorizationRequest"("userCodeHash");

