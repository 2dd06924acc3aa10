import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { redirectUriProblem, redirectUriRegistered } from "./redirect-uri";

describe("redirectUriProblem", () => {
  const accepted = [
    "https://app.example/cb",
    "https://app.example:8443/oauth/callback?tenant=1",
    "https://xn--bcher-kva.example/cb",
    "http://localhost/cb",
    "http://localhost:8080/cb",
    "http://localhost:6274/oauth/callback",
    "http://127.0.0.1/cb",
    "http://127.0.0.1:33418",
    "http://127.0.0.1:33418/",
    "http://[::1]:8080/cb?x=1",
    "HTTP://LOCALHOST:8080/cb",
    "HTTPS://APP.EXAMPLE/cb",
  ];
  for (const uri of accepted) {
    it(`accepts ${uri}`, () => assert.equal(redirectUriProblem(uri), null));
  }

  const refused: [string, RegExp][] = [
    ["http://localhost.evil.com/cb", /https|loopback/],
    ["http://localhost@evil.com/cb", /user information/],
    ["http://0.0.0.0/cb", /https|loopback/],
    ["http://127.1/cb", /https|loopback/],
    ["http://0x7f000001/cb", /https|loopback/],
    ["http://[0:0:0:0:0:0:0:1]/cb", /https|loopback/],
    ["http://127.0.0.2/cb", /https|loopback/],
    ["http://127.0.0.1.evil.com/cb", /https|loopback/],
    ["http://[::1].evil.com/cb", /https|loopback|absolute/],
    ["https://user@evil.com/cb", /user information/],
    ["https://user:pw@evil.com/cb", /user information/],
    ["https://:pw@evil.com/cb", /user information/],
    ["https://a.example/cb#frag", /fragment/],
    ["https://a.example/cb#", /fragment/],
    ["javascript:alert(1)", /https/],
    ["data:text/html,x", /https/],
    ["file:///etc/passwd", /https/],
    ["ftp://x/", /https/],
    ["custom-scheme:/cb", /https/],
    ["com.example.app:/oauth", /https/],
    ["http://example.com/cb", /loopback/],
    ["/cb", /absolute/],
    ["cb", /absolute/],
    ["//evil.com/cb", /absolute/],
    ["", /absolute/],
    ["https://a.example/c b", /whitespace/],
    [" https://a.example/cb", /whitespace/],
    ["https://a.example/cb\n", /whitespace/],
    ["https:\\\\evil.com\\cb", /backslash/],
    [`https://a.example/${"x".repeat(2000)}`, /longer/],
  ];
  for (const [uri, reason] of refused) {
    it(`refuses ${JSON.stringify(uri.slice(0, 60))}`, () => {
      const problem = redirectUriProblem(uri);
      assert.ok(problem, "refused");
      assert.match(problem, reason);
    });
  }
});

describe("redirectUriRegistered", () => {
  const registered = ["https://app.example/cb", "http://127.0.0.1:33418/cb", "http://[::1]/cb?x=1", "http://localhost:8976/callback"];
  const matching = [
    "https://app.example/cb",
    "http://127.0.0.1:33418/cb",
    "http://127.0.0.1:50123/cb",
    "http://127.0.0.1/cb",
    "http://[::1]:9/cb?x=1",
    "http://[::1]/cb?x=1",
    "http://localhost:8976/callback",
  ];
  for (const uri of matching) it(`matches ${uri}`, () => assert.equal(redirectUriRegistered(uri, registered), true));

  const different = [
    "https://app.example:8443/cb",
    "https://app.example/cb/",
    "http://127.0.0.1:50123/cb/",
    "http://127.0.0.1:50123/cbx",
    "http://127.0.0.1:50123/cb?y=1",
    "http://127.0.0.1:99999/cb",
    "http://[::1]:9/cb",
    "http://localhost:33418/cb",
    "http://localhost:8977/callback",
    "http://127.0.0.1:8976/callback",
    "http://127.0.0.1:1@evil.example/cb",
    "HTTP://127.0.0.1:50123/cb",
  ];
  for (const uri of different) it(`does not match ${uri}`, () => assert.equal(redirectUriRegistered(uri, registered), false));
});
