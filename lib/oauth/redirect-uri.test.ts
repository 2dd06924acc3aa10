import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { redirectUriProblem } from "./redirect-uri";

describe("redirectUriProblem", () => {
  const accepted = [
    "https://app.example/cb",
    "https://app.example:8443/oauth/callback?tenant=1",
    "https://xn--bcher-kva.example/cb",
    "http://localhost/cb",
    "http://localhost:8080/cb",
    "http://localhost:6274/oauth/callback",
    "HTTPS://APP.EXAMPLE/cb",
  ];
  for (const uri of accepted) {
    it(`accepts ${uri}`, () => assert.equal(redirectUriProblem(uri), null));
  }

  const refused: [string, RegExp][] = [
    ["http://localhost.evil.com/cb", /https|localhost/],
    ["http://localhost@evil.com/cb", /user information/],
    ["http://127.0.0.1/cb", /https|localhost/],
    ["http://[::1]/cb", /https|localhost/],
    ["http://0.0.0.0/cb", /https|localhost/],
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
    ["http://example.com/cb", /localhost/],
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
