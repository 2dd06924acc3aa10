-- CreateTable
CREATE TABLE "AuditCheckpoint" (
    "id" INTEGER NOT NULL,
    "seq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "verifiedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AuditCheckpoint_pkey" PRIMARY KEY ("id")
);

