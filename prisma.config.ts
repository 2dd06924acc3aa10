import path from "node:path";
import { defineConfig } from "prisma/config";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { databaseFile } from "./lib/config/database";

// The JavaScript schema engine runs migrations through the driver adapter, so
// no native engine is needed (docs/decisions/0002-prisma-without-native-engines.md).
export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join("prisma", "schema.prisma"),
  async adapter() {
    return new PrismaBetterSQLite3({ url: databaseFile(process.env) });
  },
});
