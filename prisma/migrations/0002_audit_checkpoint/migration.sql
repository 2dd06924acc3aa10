-- CreateTable
CREATE TABLE "AuditCheckpoint" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "seq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "verifiedAt" DATETIME NOT NULL
);

