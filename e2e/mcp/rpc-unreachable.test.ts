import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { freePort, startApp, type RunningApp } from "../support/app";
import { createWatchCredential, INITIALIZE_PARAMS, mcp, obtainTokens } from "../support/oauth";
import { db } from "@/lib/db";

type ToolCallReply = { result?: { isError?: boolean; content?: { text: string }[] } };

describe("a chain whose RPC does not answer", { timeout: 60_000 }, () => {
  let app: RunningApp;
  before(async () => {
    const closedPort = await freePort(); // nothing listens there
    app = await startApp({
      env: { CHAINS: JSON.stringify([{ id: 31337, name: "Offline chain", rpcUrl: `http://127.0.0.1:${closedPort}`, symbol: "ETH" }]) },
    });
  });
  after(() => app?.stop());

  it("get_balance fails at once with a tool error naming the chain; an unknown chain gets the configured ones named", async () => {
    let credentialId = "";
    const { tokens } = await obtainTokens(app, {
      credentials: async (userId) => {
        credentialId = (await createWatchCredential(userId, "Offline")).id;
        return [{ credentialId, mode: "read" }];
      },
    });
    const initialized = await mcp(app, tokens.access_token, "initialize", INITIALIZE_PARAMS);
    assert.equal(initialized.status, 200);

    const balance = (await (
      await mcp(app, tokens.access_token, "tools/call", {
        name: "get_balance",
        arguments: { credential_id: credentialId, chain_id: 31337 },
      })
    ).json()) as ToolCallReply;
    assert.equal(balance.result?.isError, true);
    assert.match(balance.result!.content![0].text, /Offline chain RPC \(chain 31337\) did not answer/);

    const before = await db().agentRequest.count();
    const unknownChain = (await (
      await mcp(app, tokens.access_token, "tools/call", { name: "get_balance", arguments: { credential_id: credentialId, chain_id: 5 } })
    ).json()) as ToolCallReply;
    assert.match(unknownChain.result!.content![0].text, /Chain 5 is not configured; available: 31337 \(Offline chain\)/);
    assert.equal(await db().agentRequest.count(), before);
  });
});
