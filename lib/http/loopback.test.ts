import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isLoopbackHostHeader } from "./loopback";

describe("isLoopbackHostHeader", () => {
  for (const host of ["localhost", "localhost:3000", "LocalHost:3000", "127.0.0.1", "127.0.0.1:8080", "[::1]", "[::1]:3000"]) {
    it(`accepts ${host}`, () => assert.equal(isLoopbackHostHeader(host), true));
  }
  for (const host of [
    null,
    "",
    "evil.example",
    "evil.example:3000",
    "localhost.evil.example",
    "127.0.0.1.nip.io:3000",
    "127.0.0.2:3000",
    "[::2]:3000",
    "[::1",
    "0.0.0.0:3000",
  ]) {
    it(`refuses ${JSON.stringify(host)}`, () => assert.equal(isLoopbackHostHeader(host), false));
  }
});
