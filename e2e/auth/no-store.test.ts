// Every answer under /api is the person's (account data, a one-time API key, where the consent sends the browser)
// and carries Cache-Control: no-store, so no browser or proxy cache keeps it. The route files under app/api are
// walked, so a route added later is covered too: each method is called signed out, from another site and with a
// body it refuses; then the answers that succeed, including next-auth's and Next's own.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { startApp, type RunningApp } from "../support/app";
import { Session, signedUpSession } from "../support/session";
import type { SoftAuthenticator } from "../support/soft-authenticator";
import { createWatchCredential, register, startValidAuthorization } from "../support/oauth";

const API_DIR = path.join(process.cwd(), "app", "api");

type Route = { path: string; methods: string[] };

/** Every route file under app/api, as a path with its dynamic segments filled in, and the methods it exports. */
function apiRoutes(dir = API_DIR): Route[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return apiRoutes(full);
    if (entry.name !== "route.ts") return [];
    const source = fs.readFileSync(full, "utf8");
    const methods = [
      ...source.matchAll(/export (?:const|async function) (GET|POST|PUT|PATCH|DELETE)\b|as (GET|POST|PUT|PATCH|DELETE)\b/g),
    ].map((match) => match[1] ?? match[2]);
    const segments = path
      .relative(path.join(process.cwd(), "app"), dir)
      .split(path.sep)
      .map((segment) => (segment === "[...nextauth]" ? "session" : segment.replace(/^\[(\w+)\]$/, "missing-$1")));
    return [{ path: `/${segments.join("/")}`, methods }];
  });
}

function expectNoStore(response: Response, what: string) {
  assert.match(response.headers.get("cache-control") ?? "(none)", /\bno-store\b/, `${what} answered ${response.status} without no-store`);
}

describe("Cache-Control: no-store on every /api answer", () => {
  let app: RunningApp;
  let person: { userId: string; session: Session; passkey: SoftAuthenticator };
  const routes = apiRoutes();

  before(async () => {
    app = await startApp();
    person = await signedUpSession(app, "no-store@example.com");
  });
  after(() => app.stop());

  it("finds the route files (the walk itself works)", () => {
    assert.ok(routes.length >= 25, `only ${routes.length} routes found`);
    for (const route of routes) assert.ok(route.methods.length > 0, `${route.path} exports no method the walk recognises`);
    assert.ok(routes.some((route) => route.path === "/api/api-keys" && route.methods.includes("POST")));
  });

  it("every route and method: signed out, from another site, and with a refused body", async () => {
    const stranger = new Session(app);
    for (const route of routes) {
      for (const method of route.methods) {
        const what = `${method} ${route.path}`;
        expectNoStore(await stranger.request(route.path, { method, raw: method === "GET" ? undefined : "{}" }), `${what} signed out`);
        const crossSite = await fetch(`${app.appUrl}${route.path}`, {
          method,
          headers: { Origin: "https://evil.example", "Content-Type": "application/json" },
          body: method === "GET" ? undefined : "{}",
        });
        expectNoStore(crossSite, `${what} cross-site`);
        const refused = await person.session.request(route.path, { method, raw: method === "GET" ? undefined : "{not json" });
        expectNoStore(refused, `${what} with a refused body`);
      }
    }
  });

  it("answers that succeed: sign-in options, a step-up challenge, the one-time API key, the consent redirect, the export", async () => {
    expectNoStore(await new Session(app).request("/api/webauthn/sign-in"), "sign-in options");

    const wallet = await createWatchCredential(person.userId, "Cold storage");
    const request = { name: "Deploy bot", credentials: [{ credentialId: wallet.id, mode: "read" }] };
    const options = await person.session.request("/api/api-keys/options", { body: request });
    assert.equal(options.status, 200);
    expectNoStore(options, "the API key's step-up challenge");
    const assertion = person.passkey.assert((await options.json()) as { challenge: string }) as AuthenticationResponseJSON;
    const issued = await person.session.request("/api/api-keys", { body: { ...request, assertion } });
    assert.equal(issued.status, 200, await issued.clone().text());
    assert.match(((await issued.clone().json()) as { key: string }).key, /^svc_live_/);
    expectNoStore(issued, "the one-time API key");

    const { requestId } = await startValidAuthorization(app, await register(app));
    const denied = await person.session.request(`/api/consent/${requestId}/deny`, { body: {} });
    assert.equal(denied.status, 200, await denied.clone().text());
    assert.match(((await denied.clone().json()) as { location: string }).location, /error=access_denied/);
    expectNoStore(denied, "the consent redirect");

    const exported = await person.session.request("/api/audit/export", { method: "GET" });
    assert.equal(exported.status, 200);
    expectNoStore(exported, "the audit export");
  });

  it("next-auth's answers: the session, the CSRF token, the providers, a refused sign-in", async () => {
    for (const name of ["session", "csrf", "providers"]) {
      const response = await person.session.request(`/api/auth/${name}`, { method: "GET" });
      assert.equal(response.status, 200);
      expectNoStore(response, `/api/auth/${name}`);
    }
    const refused = await new Session(app).request("/api/auth/callback/passkey", { form: { mode: "sign-in", response: "{}" } });
    expectNoStore(refused, "a refused sign-in");
  });

  it("Next's own answers under /api: a method the route does not export, a path that does not exist", async () => {
    expectNoStore(await person.session.request("/api/credentials", { method: "GET" }), "GET /api/credentials (405)");
    expectNoStore(await person.session.request("/api/nothing-here", { method: "GET" }), "an unknown /api path (404)");
  });
});
