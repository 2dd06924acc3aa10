import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { startDocumentServer, type DocumentServer } from "../support/client-metadata";
import { authorize, exchangeCode, expectOAuthError, pkcePair } from "../support/oauth";

// Production's default: CLIENT_METADATA_ALLOW_PRIVATE_HOSTS unset. The document server is trusted
// (NODE_EXTRA_CA_CERTS), so only the address rules can be what refuses it.
describe("client metadata documents on loopback hosts, without the development setting", () => {
  let app: RunningApp;
  let documents: DocumentServer;
  const path = "/client.json";

  before(async () => {
    documents = await startDocumentServer();
    app = await startApp({ env: { NODE_EXTRA_CA_CERTS: documents.caFile } });
  });
  after(async () => {
    await app.stop();
    await documents.close();
  });

  for (const [label, clientId, reason] of [
    ["a name that resolves to loopback", () => documents.url(path), /localhost resolves to a non-public address/],
    ["a loopback IP literal", () => documents.url(path).replace("localhost", "127.0.0.1"), /127\.0\.0\.1 is not a public address/],
    ["plain http", () => documents.url(path).replace("https://localhost", "http://127.0.0.1"), /must use https/],
  ] as const) {
    it(`refuses ${label} at authorize and at the token endpoint, without fetching`, async () => {
      const id = clientId();
      documents.publish(path, { body: { client_id: id, redirect_uris: ["http://localhost:8976/callback"] } });
      const response = await authorize(app, {
        response_type: "code",
        client_id: id,
        redirect_uri: "http://localhost:8976/callback",
        code_challenge: pkcePair().challenge,
        code_challenge_method: "S256",
      });
      const html = await response.text();
      assert.equal(response.status, 400, html);
      assert.equal(response.headers.get("location"), null);
      assert.match(html, reason);
      const client = { client_id: id, client_name: "", redirect_uris: ["http://localhost:8976/callback"] };
      await expectOAuthError(await exchangeCode(app, client, "code", "verifier"), 401, "invalid_client");
      assert.equal(documents.fetches(path), 0);
    });
  }
});
