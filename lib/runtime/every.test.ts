import { afterEach, beforeEach, describe, it, mock } from "node:test";
import assert from "node:assert/strict";
import { runEvery } from "./every";

describe("runEvery", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout", "setInterval"] }));
  afterEach(() => {
    mock.timers.reset();
    mock.restoreAll();
  });

  /** Lets the task's promise callbacks run between ticks of the mocked clock. */
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  it("runs at once when asked, then every interval", async () => {
    let runs = 0;
    runEvery("Counting", 1_000, async () => runs++, { firstAfterMs: 0 });
    assert.equal(runs, 1);
    await settle();
    mock.timers.tick(1_000);
    await settle();
    mock.timers.tick(1_000);
    assert.equal(runs, 3);
  });

  it("first runs after `firstAfterMs`, then every interval from there", async () => {
    let runs = 0;
    runEvery("Counting", 1_000, async () => runs++, { firstAfterMs: 60_000 });
    mock.timers.tick(59_999);
    assert.equal(runs, 0);
    mock.timers.tick(1);
    assert.equal(runs, 1);
    await settle();
    mock.timers.tick(1_000);
    assert.equal(runs, 2);
  });

  it("waits one interval before the first run by default, and runs once then", async () => {
    let runs = 0;
    runEvery("Counting", 1_000, async () => runs++);
    mock.timers.tick(999);
    assert.equal(runs, 0);
    mock.timers.tick(1);
    await settle();
    assert.equal(runs, 1);
    mock.timers.tick(999);
    assert.equal(runs, 1);
  });

  it("skips a turn while a run is still going: never two at once", async () => {
    let running = 0;
    let most = 0;
    let finish = () => {};
    runEvery(
      "Slow",
      1_000,
      () =>
        new Promise<void>((resolve) => {
          most = Math.max(most, ++running);
          finish = () => {
            running--;
            resolve();
          };
        }),
      { firstAfterMs: 0 },
    );
    mock.timers.tick(3_000);
    assert.equal(most, 1);
    finish();
    await settle();
    mock.timers.tick(1_000);
    assert.equal(running, 1, "the next turn after it ended runs");
  });

  it("logs a failed run by its error's name only, and runs again", async () => {
    const logged = mock.method(console, "error", () => {});
    let runs = 0;
    runEvery(
      "Settling",
      1_000,
      async () => {
        runs++;
        throw Object.assign(new Error("fetch failed: http://user:secret@rpc.example"), { name: "HttpRequestError" });
      },
      { firstAfterMs: 0 },
    );
    await settle();
    assert.deepEqual(
      logged.mock.calls.map((call) => call.arguments),
      [["Settling failed: HttpRequestError"]],
    );
    mock.timers.tick(1_000);
    assert.equal(runs, 2);
  });
});
