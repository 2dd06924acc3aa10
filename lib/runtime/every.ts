/**
 * Runs `task` in this server process after `firstAfterMs` (0: at once), then every `everyMs`, never two runs at once:
 * a run still going when the next is due skips that turn. A failed run is logged by its error's name only (an RPC's
 * error may carry its URL) under `what`, and the next runs as planned.
 */
export function runEvery(what: string, everyMs: number, task: () => Promise<unknown>, { firstAfterMs = everyMs } = {}): void {
  let running = false;
  const run = () => {
    if (running) return;
    running = true;
    void task()
      .catch((error: unknown) => console.error(`${what} failed: ${(error as Error).name}`))
      .finally(() => (running = false));
  };
  const start = () => {
    run();
    setInterval(run, everyMs).unref();
  };
  if (firstAfterMs === 0) start();
  else setTimeout(start, firstAfterMs).unref();
}
