import { before, after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { appAndBrowser } from "../support/browser";
import { startDocumentServer, type DocumentServer } from "../support/client-metadata";
import { callbackListener, connectOrAuthorize, finishAndConnect, MemoryOAuthProvider } from "../support/mcp-client";
import { chooseAndApprove, newPerson, redirected } from "../support/consent";

describe("a client metadata document's client in the browser: consent, Clients screen, revoke", { timeout: 240_000 }, () => {
  let documents: DocumentServer;
  const env: Record<string, string> = { CLIENT_METADATA_ALLOW_PRIVATE_HOSTS: "true" };
  // Runs before appAndBrowser's hook: the app must trust the document server's certificate.
  before(async () => {
    documents = await startDocumentServer();
    env.NODE_EXTRA_CA_CERTS = documents.caFile;
  });
  const suite = appAndBrowser({ env });
  after(() => documents.close());

  it("shows the document's host beside the claimed name, and revoking on the Clients screen stops the client", async () => {
    const person = await newPerson(suite.browser, suite.app, "cimd@example.com");
    const callback = await callbackListener();
    const provider = new MemoryOAuthProvider(callback.url, "Metadata Agent");
    provider.clientMetadataUrl = documents.url("/agent/client.json");
    documents.publish("/agent/client.json", { body: { client_id: provider.clientMetadataUrl, ...provider.clientMetadata } });
    const host = new URL(provider.clientMetadataUrl).host;

    assert.equal(await connectOrAuthorize(suite.app.baseUrl, provider), null);
    await person.page.goto(provider.authorizationUrl!.toString());
    await person.page.waitForURL(/\/consent\?request=/);
    await person.page.getByText("calls itself “Metadata Agent”").waitFor();
    await person.page.getByText("Client metadata from").waitFor();
    await person.page.getByText(host, { exact: true }).waitFor();
    await chooseAndApprove(person.page, [{ name: "Main", mode: "read" }]);
    const client = await finishAndConnect(suite.app.baseUrl, provider, (await redirected(person.page, callback)).get("code")!);
    assert.equal((await client.listTools()).tools.length > 0, true);

    await person.page.goto(`${suite.app.appUrl}/clients`);
    const row = person.page.getByRole("listitem", { name: "Metadata Agent" });
    await row.getByText(`Client metadata from ${host}`).waitFor();
    person.page.once("dialog", (dialog) => void dialog.accept());
    await person.page.getByRole("button", { name: "Revoke Metadata Agent" }).click();
    await row.getByText("Revoked", { exact: true }).waitFor();
    await assert.rejects(client.callTool({ name: "list_credentials", arguments: {} }));
    await callback.close();
    await person.context.close();
  });
});
