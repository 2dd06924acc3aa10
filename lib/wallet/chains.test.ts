import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { quickly } from "./chains";

describe("quickly", () => {
  it("gives the answer, or null when the read fails or outlasts the budget", async () => {
    assert.equal(await quickly(async () => 7), 7);
    assert.equal(await quickly(() => Promise.reject(new Error("node down"))), null);
    assert.equal(await quickly(() => new Promise(() => {}), 10), null);
  });
});
