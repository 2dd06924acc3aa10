import path from "node:path";

type EnvironmentVariables = Record<string, string | undefined>;

const DEFAULT_DATA_DIR = "data";

/** The data folder: the SQLite file and generated secrets live here. */
export function dataDir(env: EnvironmentVariables): string {
  return path.resolve(/* turbopackIgnore: true */ process.cwd(), env.DATA_DIR || DEFAULT_DATA_DIR);
}

/** DATABASE_URL, or the embedded SQLite file in the data folder. */
export function databaseUrl(env: EnvironmentVariables): string {
  return env.DATABASE_URL || `file:${path.join(dataDir(env), "agent-wallet.db")}`;
}

export function isPostgres(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** The SQLite file path of a `file:` URL. */
export function databaseFile(env: EnvironmentVariables): string {
  const url = databaseUrl(env);
  if (!url.startsWith("file:")) throw new Error(`DATABASE_URL: expected file:… for SQLite, got another scheme`);
  return path.resolve(/* turbopackIgnore: true */ process.cwd(), url.slice("file:".length));
}
