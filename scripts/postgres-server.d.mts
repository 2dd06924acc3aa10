export type PostgresServer = {
  /** postgresql://postgres@127.0.0.1:<port>, without a database */
  url: string;
  port: number;
  start: () => Promise<void>;
  stop: () => Promise<void>;
  remove: () => Promise<void>;
};
export const LOCAL_POSTGRES_URL: string;
export function postgresAnswers(url: string): Promise<boolean>;
export function createPostgresServer(): Promise<PostgresServer>;
