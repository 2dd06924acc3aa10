// npm run audit:verify: recomputes the audit log's hash chain in the database the app is
// configured with (DATABASE_URL, or the SQLite file in DATA_DIR) and prints one line.
// Exit 0: the chain verifies; 1: it is broken; 2: the configuration or the database failed.
import fs from "node:fs";
import { verifyAuditChain } from "@/lib/audit";
import { config, ConfigError } from "@/lib/config";
import { databaseFile, databaseUrl as configuredUrl, isPostgres } from "@/lib/config/database";
import { disconnectDatabase } from "@/lib/db";

function fail(message: string): never {
  console.error(`audit:verify: ${message}`);
  process.exit(2);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A driver's message without Prisma's code frame, and without the database URL or its password should a driver quote them. */
function reason(error: unknown, databaseUrl: string): string {
  const lines = (error instanceof Error ? error.message : String(error)).split("\n").filter((line) => line.trim());
  let text = lines.at(-1)?.trim() || "unknown error";
  const password = URL.canParse(databaseUrl) ? new URL(databaseUrl).password : "";
  for (const secret of [databaseUrl, password, decoded(password)]) if (secret) text = text.replaceAll(secret, "[redacted]");
  return text;
}

// Before config(), which would generate secrets into an empty data folder; opening a missing
// SQLite file would create an empty database. Other URLs are left to config() to judge.
if (configuredUrl(process.env).startsWith("file:") && !fs.existsSync(databaseFile(process.env))) {
  fail(`no database at ${databaseFile(process.env)} (set DATABASE_URL or DATA_DIR)`);
}

let databaseUrl: string;
try {
  databaseUrl = config().databaseUrl;
} catch (error) {
  if (error instanceof ConfigError) fail(error.message);
  // Otherwise the secrets file failed: an fs error names its path, a JSON error would quote the secrets.
  fail(`cannot read the secrets: ${(error as NodeJS.ErrnoException).code ? (error as Error).message : "secrets.json is not valid JSON"}`);
}

let result;
try {
  result = await verifyAuditChain();
  await disconnectDatabase();
} catch (error) {
  fail(`cannot read the audit log from the ${isPostgres(databaseUrl) ? "PostgreSQL" : "SQLite"} database: ${reason(error, databaseUrl)}`);
}

const events = (count: number) => `${count} event${count === 1 ? "" : "s"}`;
if (result.ok) {
  console.log(`Audit chain verified: ${events(result.events)} intact, head hash ${result.head}`);
  process.exit(0);
}
console.log(`Audit chain broken at event ${result.brokenAt}: ${result.reason} (${events(result.events)} before it verified)`);
process.exit(1);
