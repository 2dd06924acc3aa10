// A browser-like client of the app's own routes over HTTP: next-auth's session cookie, the app's Origin on
// every request, and sign-up or sign-in through next-auth's passkey provider with a software authenticator.
import assert from "node:assert/strict";
import type { RunningApp } from "./app";
import { SoftAuthenticator } from "./soft-authenticator";
import { db } from "@/lib/db";

/** A browser-like session: the app's cookies, the app's Origin on every request. */
export class Session {
  private readonly cookies = new Map<string, string>();

  /** `headers`: sent on every request too, e.g. X-Forwarded-For as a proxy would add it. */
  constructor(
    private readonly app: RunningApp,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** `raw`: a body sent as JSON's content type exactly as given, for hostile input. */
  async request(path: string, init: { method?: string; body?: unknown; form?: Record<string, string>; raw?: string } = {}) {
    const headers = this.browserHeaders();
    let body: string | undefined;
    if (init.form) {
      headers["Content-Type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(init.form).toString();
    } else if (init.raw !== undefined) {
      headers["Content-Type"] = "application/json";
      body = init.raw;
    } else if (init.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(init.body);
    }
    const response = await fetch(`${this.app.appUrl}${path}`, { method: init.method ?? "POST", headers, body, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const index = pair.indexOf("=");
      const value = pair.slice(index + 1);
      if (value) this.cookies.set(pair.slice(0, index), value);
      else this.cookies.delete(pair.slice(0, index));
    }
    return response;
  }

  /** What this session sends on every request: its headers, the app's Origin and its cookies (for a load generator). */
  browserHeaders(): Record<string, string> {
    return { ...this.headers, Origin: this.app.appUrl, Cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
  }

  async json<T = Record<string, unknown>>(path: string, body: unknown = {}, method = "POST"): Promise<{ status: number; body: T }> {
    const response = await this.request(path, { method, body });
    return { status: response.status, body: (await response.json()) as T };
  }

  /** next-auth's passkey provider: a registration (sign-up) or an assertion (sign-in). */
  async complete(mode: "sign-up" | "sign-in", response: unknown) {
    const { csrfToken } = (await (await this.request("/api/auth/csrf", { method: "GET" })).json()) as { csrfToken: string };
    const done = await this.request("/api/auth/callback/passkey", {
      form: { csrfToken, mode, response: JSON.stringify(response), json: "true" },
    });
    assert.ok(done.status < 400, `next-auth answered ${done.status}`);
    assert.ok(
      [...this.cookies.keys()].some((name) => name.endsWith("next-auth.session-token")),
      "a session cookie was set",
    );
  }

  /** Whether this session is still signed in, asked of an authenticated route that changes nothing. */
  async signedIn(): Promise<boolean> {
    const { status } = await this.json("/api/passkeys/approval-options");
    assert.ok(status === 200 || status === 401, `unexpected status ${status}`);
    return status === 200;
  }
}

/** A new account signed up over HTTP with a software passkey, and its signed-in session. */
export async function signedUpSession(app: RunningApp, email: string, headers: Record<string, string> = {}) {
  const passkey = new SoftAuthenticator({ origin: app.appUrl });
  const session = new Session(app, headers);
  const { body: options } = await session.json<{ challenge: string }>("/api/webauthn/sign-up", { email });
  await session.complete("sign-up", passkey.register(options));
  const { id: userId } = await db().user.findUniqueOrThrow({ where: { email } });
  return { userId, session, passkey };
}

/** A second passkey added to the account over HTTP, the first one approving the addition (step-up). */
export async function addedPasskey(app: RunningApp, person: { session: Session; passkey: SoftAuthenticator }): Promise<SoftAuthenticator> {
  const second = new SoftAuthenticator({ origin: app.appUrl });
  const { body: approval } = await person.session.json<{ challenge: string }>("/api/passkeys/approval-options");
  const { status, body: options } = await person.session.json<{ challenge: string; user: { id: string } }>("/api/passkeys/options", {
    assertion: person.passkey.assert(approval),
  });
  assert.equal(status, 200, JSON.stringify(options));
  const added = await person.session.json("/api/passkeys", { response: second.register(options) });
  assert.equal(added.status, 200, JSON.stringify(added.body));
  return second;
}
