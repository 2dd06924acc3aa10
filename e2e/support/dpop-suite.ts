// RFC 9449 DPoP end to end over real HTTP, on SQLite (e2e/oauth/dpop.test.ts) and PostgreSQL
// (e2e/postgres/dpop.test.ts): the authorization code with PKCE and a proof, /mcp with the bound token and a proof
// per call (raw, through the SDK and through the MCP SDK's client), every refusal RFC 9449 asks for, each changing
// nothing; refresh keeping the binding; bearer clients as before; and the CLI, whose login makes and keeps a key.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { calculateJwkThumbprint, decodeJwt, SignJWT, type JWK } from "jose";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AgentWalletClient, dpopProof, dpopSigner, generateDpopJwk, type DpopSigner } from "agent-wallet/sdk";
import { startApp, type RunningApp } from "./app";
import { approvedCode, createUser, expectOAuthError, INITIALIZE_PARAMS, obtainTokens, refreshTokens, token } from "./oauth";
import { cliEnv, DEVICE_PROMPT, runCli, startCli, waitForOutput } from "./cli";
import { db } from "@/lib/db";
import { randomId, randomSecret, sha256Hex } from "@/lib/crypto";
import { API_KEY_PREFIX } from "@/contract";
import { approveAuthorizationRequest } from "@/lib/oauth/consent";
import { findDeviceRequest } from "@/lib/oauth/device-authorization";

type Tokens = { access_token: string; token_type: string; refresh_token?: string; scope: string };

const newSigner = async () => dpopSigner(await generateDpopJwk());
const thumbprint = (signer: DpopSigner) => calculateJwkThumbprint(signer.publicJwk as JWK);

/** A proof with any claims, signed by `signer` with its own jwk in the header: for the proofs the SDK never makes. */
async function craftedProof(signer: DpopSigner, claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: signer.alg, typ: "dpop+jwt", jwk: signer.publicJwk as JWK })
    .sign(signer.privateKey);
}

async function tokenWithProof(app: RunningApp, form: Record<string, string | undefined>, proof: string | null): Promise<Response> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) if (value !== undefined) body.set(name, value);
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded" };
  if (proof !== null) headers.DPoP = proof;
  return fetch(`${app.baseUrl}/oauth/token`, { method: "POST", headers, body });
}

let rpcId = 0;
/** `initialize` on /mcp with the given Authorization and DPoP headers. */
function mcpCall(app: RunningApp, authorization: string | null, proof: string | null = null): Promise<Response> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
  };
  if (authorization !== null) headers.Authorization = authorization;
  if (proof !== null) headers.DPoP = proof;
  const body = JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method: "initialize", params: INITIALIZE_PARAMS });
  return fetch(`${app.baseUrl}/mcp`, { method: "POST", headers, body });
}

/** How many proofs the database holds and events the audit log: a refusal changes neither. */
async function footprint() {
  return { proofs: await db().dpopProof.count(), events: await db().auditEvent.count() };
}

export function dpopSuite(database: "sqlite" | "postgres") {
  describe(`DPoP-bound tokens (RFC 9449) on ${database}`, { timeout: 240_000 }, () => {
    let app: RunningApp;
    let mcpUrl: string;
    before(async () => {
      app = await startApp({ database });
      mcpUrl = `${app.baseUrl}/mcp`;
    });
    after(() => app?.stop());

    /** A code (with PKCE) exchanged with a proof of `signer`: the bound tokens. */
    async function boundTokens(signer: DpopSigner) {
      const approved = await approvedCode(app);
      const response = await tokenWithProof(
        app,
        {
          grant_type: "authorization_code",
          client_id: approved.client.client_id,
          code: approved.code,
          redirect_uri: approved.client.redirect_uris[0],
          code_verifier: approved.verifier,
        },
        await dpopProof(signer, "POST", `${app.baseUrl}/oauth/token`),
      );
      assert.equal(response.status, 200, await response.clone().text());
      return { ...approved, tokens: (await response.json()) as Tokens };
    }

    /** A 401 whose challenges are the Bearer one (the metadata) and a DPoP one carrying `error`. */
    async function expectDpopRefusal(response: Response, error: "invalid_token" | "invalid_dpop_proof", description: RegExp) {
      const text = await response.text();
      assert.equal(response.status, 401, text);
      const challenge = response.headers.get("www-authenticate")!;
      assert.match(
        challenge,
        new RegExp(
          `^Bearer resource_metadata="${app.baseUrl}/.well-known/oauth-protected-resource", scope="mcp offline_access", ` +
            `DPoP error="${error}", `,
        ),
      );
      assert.match(challenge, /algs="ES256 EdDSA RS256"$/);
      const body = JSON.parse(text) as { error: string; error_description: string };
      assert.equal(body.error, error);
      assert.match(body.error_description, description);
    }

    it("a code with PKCE and a proof gives a DPoP-bound token (cnf.jkt); /mcp takes it with a proof per call", async () => {
      const signer = await newSigner();
      const { tokens } = await boundTokens(signer);
      assert.equal(tokens.token_type, "DPoP");
      assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt: await thumbprint(signer) });
      const start = await footprint();
      const response = await mcpCall(app, `DPoP ${tokens.access_token}`, await dpopProof(signer, "POST", mcpUrl, tokens.access_token));
      assert.equal(response.status, 200, await response.text());
      assert.equal((await footprint()).proofs, start.proofs + 1, "the proof's jti is recorded");
    });

    it("the SDK with a key, and the MCP SDK's client with a fetch that adds proofs, both call tools with the bound token", async () => {
      const jwk = await generateDpopJwk();
      const signer = await dpopSigner(jwk);
      const { tokens, client } = await boundTokens(signer);
      const sdk = new AgentWalletClient({
        baseUrl: app.baseUrl,
        accessToken: tokens.access_token,
        clientId: client.client_id,
        dpopKey: jwk,
      });
      assert.deepEqual((await sdk.listCredentials()).credentials, []);

      const withProofs: typeof fetch = async (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set("Authorization", `DPoP ${tokens.access_token}`);
        headers.set("DPoP", await dpopProof(signer, init?.method ?? "GET", String(url), tokens.access_token));
        return fetch(url, { ...init, headers });
      };
      const mcp = new Client({ name: "dpop-agent", version: "1.0.0" });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { fetch: withProofs }));
      assert.ok((await mcp.listTools()).tools.some((tool) => tool.name === "list_credentials"));
      await mcp.close();
    });

    it("refuses a bound token as Bearer, unproved, by another key, with a wrong ath, htm, htu, a stale iat: no change", async () => {
      const signer = await newSigner();
      const { tokens } = await boundTokens(signer);
      const bound = tokens.access_token;
      const start = await footprint();
      const other = await newSigner();
      await expectDpopRefusal(await mcpCall(app, `Bearer ${bound}`), "invalid_token", /bound to a DPoP key/);
      await expectDpopRefusal(
        await mcpCall(app, `Bearer ${bound}`, await dpopProof(signer, "POST", mcpUrl, bound)),
        "invalid_token",
        /bound to a DPoP key/,
      );
      await expectDpopRefusal(await mcpCall(app, `DPoP ${bound}`), "invalid_dpop_proof", /needs a DPoP proof/);
      await expectDpopRefusal(
        await mcpCall(app, `DPoP ${bound}`, await dpopProof(other, "POST", mcpUrl, bound)),
        "invalid_dpop_proof",
        /another key/,
      );
      await expectDpopRefusal(
        await mcpCall(app, `DPoP ${bound}`, await dpopProof(signer, "POST", mcpUrl, "another token")),
        "invalid_dpop_proof",
        /ath/,
      );
      await expectDpopRefusal(
        await mcpCall(app, `DPoP ${bound}`, await dpopProof(signer, "PUT", mcpUrl, bound)),
        "invalid_dpop_proof",
        /htm/,
      );
      await expectDpopRefusal(
        await mcpCall(app, `DPoP ${bound}`, await dpopProof(signer, "POST", `${app.baseUrl}/oauth/token`, bound)),
        "invalid_dpop_proof",
        /htu/,
      );
      const ath = createHash("sha256").update(bound).digest("base64url");
      const stale = await craftedProof(signer, { htm: "POST", htu: mcpUrl, ath, iat: Math.floor(Date.now() / 1000) - 120 });
      assert.equal((await mcpCall(app, `DPoP ${bound}`, await craftedProof(signer, { htm: "POST", htu: mcpUrl, ath }))).status, 200);
      start.proofs += 1;
      await expectDpopRefusal(await mcpCall(app, `DPoP ${bound}`, stale), "invalid_dpop_proof", /iat/);
      const twoProofs = `${await dpopProof(signer, "POST", mcpUrl, bound)}, ${await dpopProof(signer, "POST", mcpUrl, bound)}`;
      await expectDpopRefusal(await mcpCall(app, `DPoP ${bound}`, twoProofs), "invalid_dpop_proof", /exactly one/);
      assert.deepEqual(await footprint(), start, "no refused proof was recorded, no event written");
    });

    it("a proof is used once: replayed it is refused, and of concurrent uses of one jti exactly one succeeds", async () => {
      const signer = await newSigner();
      const { tokens } = await boundTokens(signer);
      const bound = `DPoP ${tokens.access_token}`;
      const proof = await dpopProof(signer, "POST", mcpUrl, tokens.access_token);
      assert.equal((await mcpCall(app, bound, proof)).status, 200);
      await expectDpopRefusal(await mcpCall(app, bound, proof), "invalid_dpop_proof", /already used/);

      const shared = await dpopProof(signer, "POST", mcpUrl, tokens.access_token);
      const answers = await Promise.all(Array.from({ length: 8 }, () => mcpCall(app, bound, shared)));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 401, 401, 401, 401, 401, 401, 401]);
      for (const answer of answers.filter((candidate) => candidate.status === 401))
        await expectDpopRefusal(answer, "invalid_dpop_proof", /already used/);
    });

    it("the token endpoint refuses alg none, a private jwk, a replayed proof, one for another URL: spending nothing", async () => {
      const signer = await newSigner();
      const approved = await approvedCode(app);
      const form = {
        grant_type: "authorization_code",
        client_id: approved.client.client_id,
        code: approved.code,
        redirect_uri: approved.client.redirect_uris[0],
        code_verifier: approved.verifier,
      };
      const tokenUrl = `${app.baseUrl}/oauth/token`;
      const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
      const claims = { jti: crypto.randomUUID(), htm: "POST", htu: tokenUrl, iat: Math.floor(Date.now() / 1000) };
      const none = `${b64({ alg: "none", typ: "dpop+jwt", jwk: signer.publicJwk })}.${b64(claims)}.`;
      await expectOAuthError(await tokenWithProof(app, form, none), 400, "invalid_dpop_proof");

      const privateJwk = await generateDpopJwk();
      const privateSigner = await dpopSigner(privateJwk);
      const leaky = await new SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: privateJwk as JWK })
        .sign(privateSigner.privateKey);
      const refusedLeaky = await expectOAuthError(await tokenWithProof(app, form, leaky), 400, "invalid_dpop_proof");
      assert.match(String(refusedLeaky.error_description), /without its private part/);
      await expectOAuthError(await tokenWithProof(app, form, await dpopProof(signer, "POST", mcpUrl)), 400, "invalid_dpop_proof");

      // A used proof is refused before the code is looked at: the code stays usable, then by a fresh proof.
      const used = await dpopProof(signer, "POST", tokenUrl);
      await expectOAuthError(
        await tokenWithProof(app, { ...form, grant_type: "refresh_token", refresh_token: "x" }, used),
        400,
        "invalid_grant",
      );
      await expectOAuthError(await tokenWithProof(app, form, used), 400, "invalid_dpop_proof");
      const response = await tokenWithProof(app, form, await dpopProof(signer, "POST", tokenUrl));
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(((await response.json()) as Tokens).token_type, "DPoP");
    });

    it("a refresh keeps the binding: it needs a proof of the same key, and refused it spends nothing", async () => {
      const signer = await newSigner();
      const { tokens, client } = await boundTokens(signer);
      const refreshToken = tokens.refresh_token!;
      const stored = await db().refreshToken.findFirst({ where: { clientId: client.client_id, rotatedAt: null } });
      assert.equal(stored?.jkt, await thumbprint(signer));
      const form = { grant_type: "refresh_token", client_id: client.client_id, refresh_token: refreshToken };
      const tokenUrl = `${app.baseUrl}/oauth/token`;

      const withoutProof = await expectOAuthError(await refreshTokens(app, client, refreshToken), 400, "invalid_dpop_proof");
      assert.match(String(withoutProof.error_description), /bound to a DPoP key/);
      await expectOAuthError(
        await tokenWithProof(app, form, await dpopProof(await newSigner(), "POST", tokenUrl)),
        400,
        "invalid_dpop_proof",
      );
      assert.equal((await db().refreshToken.findUnique({ where: { tokenHash: stored!.tokenHash } }))?.rotatedAt, null, "not spent");
      assert.equal((await db().client.findUnique({ where: { id: client.client_id } }))?.status, "active", "no replay");

      const response = await tokenWithProof(app, form, await dpopProof(signer, "POST", tokenUrl));
      assert.equal(response.status, 200, await response.clone().text());
      const next = (await response.json()) as Tokens;
      assert.equal(next.token_type, "DPoP");
      assert.deepEqual(decodeJwt(next.access_token).cnf, { jkt: await thumbprint(signer) });
      const successor = await db().refreshToken.findFirst({ where: { clientId: client.client_id, rotatedAt: null } });
      assert.equal(successor?.jkt, await thumbprint(signer), "the successor is bound to the same key");
      const call = await mcpCall(app, `DPoP ${next.access_token}`, await dpopProof(signer, "POST", mcpUrl, next.access_token));
      assert.equal(call.status, 200);
    });

    it("bearer clients work as before: token_type Bearer, no cnf, the same challenge; an unbound token is not taken as DPoP", async () => {
      const { tokens, client } = await obtainTokens(app);
      assert.equal(tokens.token_type, "Bearer");
      assert.equal(decodeJwt(tokens.access_token).cnf, undefined);
      assert.equal((await mcpCall(app, `Bearer ${tokens.access_token}`)).status, 200);
      const missing = await mcpCall(app, null);
      assert.equal(
        missing.headers.get("www-authenticate"),
        `Bearer resource_metadata="${app.baseUrl}/.well-known/oauth-protected-resource", scope="mcp offline_access"`,
      );
      const signer = await newSigner();
      const asDpop = await mcpCall(app, `DPoP ${tokens.access_token}`, await dpopProof(signer, "POST", mcpUrl, tokens.access_token));
      await expectDpopRefusal(asDpop, "invalid_token", /not DPoP-bound/);
      const refreshed = await refreshTokens(app, client, tokens.refresh_token!);
      assert.equal(refreshed.status, 200);
      assert.equal(((await refreshed.json()) as Tokens).token_type, "Bearer");
      // Untouched too: a token request without any DPoP header reads as before.
      await expectOAuthError(await token(app, { grant_type: "authorization_code", client_id: client.client_id }), 400, "invalid_request");
    });

    it("a personal svc_live_ key stays a bearer key: as Bearer it works, with the DPoP scheme it is refused", async () => {
      const user = await createUser();
      const key = `${API_KEY_PREFIX}${randomSecret()}`;
      const clientId = randomId("c_");
      await db().client.create({
        data: { id: clientId, kind: "api_key", name: "Key", userId: user.id, keyHash: sha256Hex(key), keyHint: "x" },
      });
      await db().grant.create({ data: { id: randomId("g_"), userId: user.id, clientId, scope: "mcp", createdAt: new Date() } });
      assert.equal((await mcpCall(app, `Bearer ${key}`)).status, 200);
      const signer = await newSigner();
      await expectDpopRefusal(
        await mcpCall(app, `DPoP ${key}`, await dpopProof(signer, "POST", mcpUrl, key)),
        "invalid_token",
        /Bearer scheme/,
      );
    });

    it("the CLI makes a key at login, keeps it with its tokens in a file of mode 0600, and calls with DPoP", async () => {
      const { env, configDir } = cliEnv();
      const login = startCli(["login", "--no-browser", "--base-url", app.baseUrl], env);
      try {
        const [, userCode] = await waitForOutput(login, DEVICE_PROMPT);
        const { location } = await findDeviceRequest(userCode);
        const requestId = new URL(location, app.appUrl).searchParams.get("request")!;
        const person = await db().user.create({ data: { id: `u_${crypto.randomUUID()}`, email: `${crypto.randomUUID()}@example.test` } });
        await approveAuthorizationRequest({ requestId, userId: person.id, credentials: [], stayConnected: true });
        const result = await login.result;
        assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      } finally {
        if (login.child.exitCode === null) login.child.kill();
      }
      const file = path.join(configDir, "session.json");
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const session = JSON.parse(fs.readFileSync(file, "utf8")) as { tokens: { accessToken: string; tokenType: string }; dpopKey: JWK };
      assert.equal(session.dpopKey.kty, "EC");
      assert.equal(session.dpopKey.crv, "P-256");
      assert.equal(typeof session.dpopKey.d, "string", "the private key, kept only here");
      assert.equal(session.tokens.tokenType, "DPoP");
      const { d: _private, ...publicJwk } = session.dpopKey;
      assert.deepEqual(decodeJwt(session.tokens.accessToken).cnf, { jkt: await calculateJwkThumbprint(publicJwk as JWK) });

      const start = await footprint();
      const whoami = await runCli(["whoami", "--json"], env);
      assert.equal(whoami.code, 0, `${whoami.stdout}\n${whoami.stderr}`);
      assert.ok((await footprint()).proofs > start.proofs, "the CLI's calls carry proofs");
      await expectDpopRefusal(await mcpCall(app, `Bearer ${session.tokens.accessToken}`), "invalid_token", /bound to a DPoP key/);
    });
  });
}
