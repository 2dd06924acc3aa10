import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { atUtc } from "./index";

describe("atUtc", () => {
  const now = new Date("2026-11-28T17:54:00Z");

  it("says only the time on today's date", () => {
    assert.equal(atUtc(new Date("2026-11-28T23:59:00Z"), now), "at 23:59 UTC");
    assert.equal(atUtc(new Date("2026-11-28T09:05:00Z"), now), "at 09:05 UTC");
  });

  it("names the day when it is not today, even a few hours away", () => {
    assert.equal(atUtc(new Date("2026-11-29T00:30:00Z"), now), "on 29 Nov at 00:30 UTC");
    assert.equal(atUtc(new Date("2026-12-05T14:00:00Z"), now), "on 5 Dec at 14:00 UTC");
  });

  it("names the year when it is not this one", () => {
    assert.equal(atUtc(new Date("2027-01-02T09:00:00Z"), now), "on 2 Jan 2027 at 09:00 UTC");
  });
});
