import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cacheLifetimeSeconds, clientIdUrlProblem, isClientIdUrl } from "./client-metadata-document";

describe("isClientIdUrl", () => {
  it("tells URLs from the ids registration issues", () => {
    assert.equal(isClientIdUrl("https://app.example.com/client.json"), true);
    assert.equal(isClientIdUrl("http://127.0.0.1:8080/client.json"), true);
    assert.equal(isClientIdUrl("javascript:alert(1)"), true);
    assert.equal(isClientIdUrl("c_Q2xpZW50SWQxMjM0NTY3OA"), false);
  });
});

describe("clientIdUrlProblem", () => {
  for (const url of [
    "https://app.example.com/client.json",
    "https://app.example.com:8443/oauth/metadata",
    "https://app.example.com/client?version=2",
  ]) {
    it(`accepts ${url}`, () => assert.equal(clientIdUrlProblem(url, false), null));
  }
  for (const [url, reason] of [
    ["http://app.example.com/client.json", /https/],
    ["ftp://app.example.com/client.json", /https/],
    ["https://app.example.com", /path/],
    ["https://app.example.com/", /path/],
    ["https://app.example.com/client.json#x", /fragment/],
    ["https://user:pass@app.example.com/client.json", /user name or password/],
    ["https://user@app.example.com/client.json", /user name or password/],
    ["https://app.example.com/a/../client.json", /dot|\.\./],
    ["https://app.example.com/./client.json", /\. or \.\./],
    ["https://app.example.com/a/%2e%2E/client.json", /\. or \.\./],
    ["https://APP.example.com/client.json", /normalized form \(https:\/\/app\.example\.com\/client\.json\)/],
    ["https://app.example.com:443/client.json", /normalized form/],
    ["https://app.example.com/client json", /whitespace/],
    ["https://app.example.com/\\client", /backslash/],
    [`https://app.example.com/${"a".repeat(2000)}`, /longer than/],
    ["https://", /not an absolute URL/],
  ] as const) {
    it(`refuses ${url.slice(0, 60)}`, () => assert.match(clientIdUrlProblem(url, false) ?? "accepted", reason));
  }
  it("accepts plain http only with the development setting", () => {
    assert.equal(clientIdUrlProblem("http://127.0.0.1:8080/client.json", true), null);
    assert.match(clientIdUrlProblem("http://127.0.0.1:8080/client.json", false)!, /https/);
  });
});

describe("cacheLifetimeSeconds", () => {
  it("honours max-age up to a day", () => {
    assert.equal(cacheLifetimeSeconds("public, max-age=600"), 600);
    assert.equal(cacheLifetimeSeconds("max-age=0"), 0);
    assert.equal(cacheLifetimeSeconds("max-age=31536000"), 86400);
  });
  it("fetches every time for no-store and no-cache", () => {
    assert.equal(cacheLifetimeSeconds("no-store"), 0);
    assert.equal(cacheLifetimeSeconds("No-Cache, max-age=600"), 0);
  });
  it("keeps a document 5 minutes without directions", () => {
    assert.equal(cacheLifetimeSeconds(null), 300);
    assert.equal(cacheLifetimeSeconds("public"), 300);
    assert.equal(cacheLifetimeSeconds("max-age=abc"), 300);
  });
});
