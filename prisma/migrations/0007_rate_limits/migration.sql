-- CreateTable
CREATE TABLE "RateLimit" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "points" INTEGER NOT NULL,
    "expire" DATETIME
);

-- CreateIndex
CREATE INDEX "RateLimit_expire_idx" ON "RateLimit"("expire");

