import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";

describe("discovery documents", () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.stop());

  it("serves the RFC 8414 metadata: the seed's fields, revocation, RFC 9207, CIMD and DPoP, built from BASE_URL", async () => {
    const response = await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type")!, /application\/json/);
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.match(response.headers.get("cache-control")!, /max-age=\d+/);
    assert.deepEqual(await response.json(), {
      issuer: app.baseUrl,
      authorization_endpoint: `${app.baseUrl}/oauth/authorize`,
      token_endpoint: `${app.baseUrl}/oauth/token`,
      registration_endpoint: `${app.baseUrl}/oauth/register`,
      revocation_endpoint: `${app.baseUrl}/oauth/revoke`,
      device_authorization_endpoint: `${app.baseUrl}/oauth/device_authorization`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      revocation_endpoint_auth_methods_supported: ["none"],
      scopes_supported: ["mcp", "offline_access"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      dpop_signing_alg_values_supported: ["ES256", "EdDSA", "RS256"],
    });
  });

  for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
    it(`serves the RFC 9728 metadata at ${path}`, async () => {
      const response = await fetch(`${app.baseUrl}${path}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("access-control-allow-origin"), "*");
      assert.deepEqual(await response.json(), {
        resource: `${app.baseUrl}/mcp`,
        authorization_servers: [app.baseUrl],
        bearer_methods_supported: ["header"],
        scopes_supported: ["mcp"],
        dpop_signing_alg_values_supported: ["ES256", "EdDSA", "RS256"],
        dpop_bound_access_tokens_required: false,
      });
    });
  }

  it("answers CORS preflights on the public endpoints", async () => {
    for (const path of ["/.well-known/oauth-authorization-server", "/oauth/register", "/oauth/token", "/oauth/revoke", "/mcp"]) {
      const response = await fetch(`${app.baseUrl}${path}`, {
        method: "OPTIONS",
        headers: {
          Origin: "https://agent.example",
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization, content-type",
        },
      });
      assert.equal(response.status, 204, path);
      assert.equal(response.headers.get("access-control-allow-origin"), "*", path);
      assert.match(response.headers.get("access-control-allow-headers")!, /Authorization/i, path);
    }
  });
});
