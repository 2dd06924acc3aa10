// What anyone who can open /oauth/authorize can make the service fetch by naming client metadata document URLs, over
// real HTTP against the started app and a real document server on loopback (counting the fetches that reach it): at
// most RATE_LIMIT_CLIENT_METADATA_PER_HOST fetches per host and window, whatever URLs on it are named, and a document
// whose fetch failed is not fetched again for a minute.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { startDocumentServer, type DocumentServer } from "../support/client-metadata";
import { authorize, exchangeCode, expectOAuthError, pkcePair } from "../support/oauth";
import { db } from "@/lib/db";

const REDIRECT_URI = "http://localhost:8976/callback";
const BUDGET = 5;

describe("client metadata document fetches", { timeout: 120_000 }, () => {
  let app: RunningApp;
  let documents: DocumentServer;

  before(async () => {
    documents = await startDocumentServer();
    app = await startApp({
      env: {
        CLIENT_METADATA_ALLOW_PRIVATE_HOSTS: "true",
        NODE_EXTRA_CA_CERTS: documents.caFile,
        RATE_LIMIT_CLIENT_METADATA_PER_HOST: `${BUDGET}/1m`,
      },
    });
  });
  after(async () => {
    await app?.stop();
    await documents?.close();
  });

  /** The document server's URL for `path` on one of the two hosts its certificate names. */
  const urlOn = (host: "localhost" | "127.0.0.1", path: string) => documents.url(path).replace("localhost", host);

  function publish(clientId: string) {
    documents.publish(new URL(clientId).pathname, {
      body: { client_id: clientId, client_name: "Metadata Agent", redirect_uris: [REDIRECT_URI] },
    });
  }

  const authorizeAs = (clientId: string) =>
    authorize(app, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: pkcePair().challenge,
      code_challenge_method: "S256",
    });

  /** The page shown instead of a redirect, with the reason it gives. */
  async function expectErrorPage(response: Response, reason: RegExp) {
    const html = await response.text();
    assert.equal(response.status, 400, html);
    assert.equal(response.headers.get("location"), null);
    assert.match(html, reason);
  }

  const tokenAs = (clientId: string) =>
    exchangeCode(app, { client_id: clientId, client_name: "", redirect_uris: [REDIRECT_URI] }, "code", "v");

  it("a document that failed is not fetched again within the minute: the same error at once, even once it is fixed", async () => {
    const missing = urlOn("localhost", "/later/client.json");
    await expectErrorPage(await authorizeAs(missing), /answered 404/);
    await expectErrorPage(await authorizeAs(missing), /answered 404.*not fetched again for \d+ s/);
    const body = await expectOAuthError(await tokenAs(missing), 401, "invalid_client");
    assert.match(String(body.error_description), /answered 404/);
    publish(missing);
    await expectErrorPage(await authorizeAs(missing), /answered 404/);
    assert.equal(documents.fetches("/later/client.json"), 1);

    const invalid = urlOn("localhost", "/invalid/client.json");
    documents.publish("/invalid/client.json", {
      body: { client_id: urlOn("localhost", "/elsewhere.json"), redirect_uris: [REDIRECT_URI] },
    });
    await expectErrorPage(await authorizeAs(invalid), /client_id does not equal its URL/);
    await expectErrorPage(await authorizeAs(invalid), /client_id does not equal its URL/);
    assert.equal(documents.fetches("/invalid/client.json"), 1);
    assert.equal(await db().client.count({ where: { id: { in: [missing, invalid] } } }), 0, "a failure writes no client");
  });

  it(`past ${BUDGET} fetches a minute from one host, any URL on it is refused without a fetch; another host is not`, async () => {
    const before = documents.fetches();
    for (let index = 1; index <= BUDGET; index++)
      await expectErrorPage(await authorizeAs(urlOn("127.0.0.1", `/flood/${index}.json`)), /answered 404/);
    assert.equal(documents.fetches() - before, BUDGET);

    const good = urlOn("127.0.0.1", "/good/client.json");
    publish(good);
    await expectErrorPage(await authorizeAs(good), /fetched from 127\.0\.0\.1 too often; try again in \d+ s/);
    await expectErrorPage(await authorizeAs(urlOn("127.0.0.1", "/flood/next.json")), /fetched from 127\.0\.0\.1 too often/);
    const body = await expectOAuthError(await tokenAs(good), 401, "invalid_client");
    assert.match(String(body.error_description), /fetched from 127\.0\.0\.1 too often/);
    assert.equal(documents.fetches() - before, BUDGET, "no fetch reached the host past its budget");

    const elsewhere = urlOn("localhost", "/elsewhere/client.json");
    publish(elsewhere);
    assert.equal((await authorizeAs(elsewhere)).status, 302);
    assert.equal(documents.fetches("/elsewhere/client.json"), 1);
  });
});
