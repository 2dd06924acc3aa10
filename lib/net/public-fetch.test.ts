import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type net from "node:net";
import { fetchPublicJson, isPublicAddress, PublicFetchError } from "./public-fetch";

describe("isPublicAddress", () => {
  for (const address of ["8.8.8.8", "93.184.215.14", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
    it(`accepts ${address}`, () => assert.equal(isPublicAddress(address), true));
  }
  for (const address of [
    "127.0.0.1",
    "127.1.2.3",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",
    "169.254.169.254",
    "0.0.0.0",
    "0.1.2.3",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fe80::1",
    "fd00::1",
    "fd00:ec2::254",
    "fc00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "2002:7f00:1::",
    "64:ff9b::a00:1",
    "not an address",
  ]) {
    it(`refuses ${address}`, () => assert.equal(isPublicAddress(address), false));
  }
});

/** A real local server whose answer each test chooses; counts the requests it saw. */
function localServer() {
  let handler: http.RequestListener = (_request, response) => response.end();
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests += 1;
    handler(request, response);
  });
  return {
    server,
    answer: (next: http.RequestListener) => (handler = next),
    requests: () => requests,
    url: (path: string) => new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}${path}`),
  };
}

async function refused(promise: Promise<unknown>, reason: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof PublicFetchError, `a PublicFetchError, got ${String(error)}`);
    assert.match(error.message, reason);
    return true;
  });
}

describe("fetchPublicJson", () => {
  const local = localServer();
  before(() => new Promise<void>((resolve) => local.server.listen(0, "127.0.0.1", resolve)));
  after(() => new Promise<void>((resolve) => local.server.close(() => resolve())));
  const open = { allowPrivateHosts: true };

  it("refuses plain http, loopback literals and names that resolve to loopback, without connecting", async () => {
    const before = local.requests();
    await refused(fetchPublicJson(local.url("/doc"), { allowPrivateHosts: false }), /only https/);
    await refused(fetchPublicJson(new URL("https://127.0.0.1/doc"), { allowPrivateHosts: false }), /127\.0\.0\.1 is not a public/);
    await refused(fetchPublicJson(new URL("https://[::1]/doc"), { allowPrivateHosts: false }), /::1 is not a public/);
    await refused(fetchPublicJson(new URL("https://169.254.169.254/latest"), { allowPrivateHosts: false }), /not a public/);
    await refused(fetchPublicJson(new URL("https://localhost:1/doc"), { allowPrivateHosts: false }), /localhost resolves to a non-public/);
    assert.equal(local.requests(), before);
  });

  it("returns the JSON body and its Cache-Control", async () => {
    local.answer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "max-age=60" });
      response.end(JSON.stringify({ hello: "world" }));
    });
    assert.deepEqual(await fetchPublicJson(local.url("/doc"), open), { body: { hello: "world" }, cacheControl: "max-age=60" });
  });

  it("does not follow redirects", async () => {
    local.answer((_request, response) => {
      response.writeHead(302, { Location: "http://127.0.0.1:1/elsewhere" });
      response.end();
    });
    await refused(fetchPublicJson(local.url("/doc"), open), /redirect \(302\)/);
  });

  it("refuses a body larger than the limit while reading it, even without Content-Length", async () => {
    local.answer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.write(`{"padding":"${"x".repeat(40 * 1024)}`);
      response.end(`${"y".repeat(40 * 1024)}"}`);
    });
    await refused(fetchPublicJson(local.url("/doc"), open), /larger than 65536 bytes/);
  });

  it("refuses a body announced larger than the limit", async () => {
    local.answer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json", "Content-Length": "100" });
      response.end(JSON.stringify({ padding: "x".repeat(86) }));
    });
    await refused(fetchPublicJson(local.url("/doc"), { ...open, maxBytes: 50 }), /larger than 50 bytes/);
  });

  it("refuses other content types, other statuses and invalid JSON", async () => {
    local.answer((_request, response) => {
      response.writeHead(200, { "Content-Type": "text/html" });
      response.end("{}");
    });
    await refused(fetchPublicJson(local.url("/doc"), open), /content type is text\/html/);
    local.answer((_request, response) => {
      response.writeHead(404, { "Content-Type": "application/json" });
      response.end("{}");
    });
    await refused(fetchPublicJson(local.url("/doc"), open), /answered 404/);
    local.answer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end("{not json");
    });
    await refused(fetchPublicJson(local.url("/doc"), open), /not valid JSON/);
  });

  it("gives up after the time limit", async () => {
    local.answer((_request, response) => {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.write("{");
      setTimeout(() => response.end("}"), 1000);
    });
    const started = Date.now();
    await refused(fetchPublicJson(local.url("/doc"), { ...open, timeoutMs: 200 }), /within 200 ms/);
    assert.ok(Date.now() - started < 900);
  });
});
