import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startApp, type RunningApp } from "../support/app";
import { orderTypedData } from "../support/fixtures";
import { INITIALIZE_PARAMS, mcp, signerGrant } from "../support/oauth";
import { db } from "@/lib/db";

type ToolCallReply = { result?: { isError?: boolean; content?: { text: string }[] } };

describe("sign_typed_data refuses what the person could not review", { timeout: 60_000 }, () => {
  let app: RunningApp;
  let bearer = "";
  let credentialId = "";
  before(async () => {
    app = await startApp();
    ({ bearer, credentialId } = await signerGrant(app));
    assert.equal((await mcp(app, bearer, "initialize", INITIALIZE_PARAMS)).status, 200);
  });
  after(() => app?.stop());

  async function signTypedData(typedData: unknown): Promise<ToolCallReply> {
    const response = await mcp(app, bearer, "tools/call", {
      name: "sign_typed_data",
      arguments: { credential_id: credentialId, typed_data: typedData },
    });
    return (await response.json()) as ToolCallReply;
  }

  it("a message field not declared in types, an undeclared domain field, an unknown primaryType: tool errors naming them", async () => {
    const before = await db().agentRequest.count();
    const hidden = orderTypedData("Shop", "memo");
    Object.assign(hidden.message, { beneficiary: "0x000000000000000000000000000000000000dEaD" });
    const cases: [unknown, RegExp][] = [
      [hidden, /message\.beneficiary is not declared in types\.Order/],
      [
        { ...orderTypedData("Shop", "memo"), domain: { ...orderTypedData("Shop", "memo").domain, salt: `0x${"11".repeat(32)}` } },
        /domain\.salt/,
      ],
      [{ ...orderTypedData("Shop", "memo"), primaryType: "Refund" }, /primaryType Refund is not declared in types/],
    ];
    for (const [typedData, message] of cases) {
      const reply = await signTypedData(typedData);
      assert.equal(reply.result?.isError, true);
      assert.match(reply.result!.content![0].text, message);
    }
    assert.equal(await db().agentRequest.count(), before, "no request was created");
  });

  it("well-formed typed data becomes a pending request", async () => {
    const reply = await signTypedData(orderTypedData("Shop", "memo"));
    assert.notEqual(reply.result?.isError, true, reply.result?.content?.[0].text);
    const view = JSON.parse(reply.result!.content![0].text) as { status: string };
    assert.equal(view.status, "pending");
  });
});
