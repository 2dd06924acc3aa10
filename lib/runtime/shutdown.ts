import { processWide } from "./process-wide";

/**
 * Work to finish before the production server (server.ts) exits on SIGTERM or SIGINT, such as audit events
 * still waiting for their append. Kept on globalThis: every copy of a module that Next's bundles load adds its
 * own, and the server runs them all.
 */
const hooks = () => processWide("shutdown-hooks", () => new Set<() => Promise<void>>());

export function onShutdown(hook: () => Promise<void>): void {
  hooks().add(hook);
}

/** Runs every hook, for at most `ms`; a hook that fails is logged and does not stop the others. */
export async function runShutdownHooks(ms: number): Promise<void> {
  const all = [...hooks()].map((hook) => hook().catch((error: unknown) => console.error(`shutdown: ${(error as Error).message}`)));
  await Promise.race([Promise.all(all), new Promise((resolve) => setTimeout(resolve, ms).unref())]);
}
