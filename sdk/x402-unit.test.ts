import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { AgentWalletClient } from "./client";
import type { ToolInput, ToolOutput } from "../contract";
import { PaymentNotApprovedError } from "./errors";
import { callPaidTool, payingFetch, type McpToolCall } from "./x402";

const PAID = { header: "PAYMENT-SIGNATURE", value: "cGFpZA==" } as ToolOutput<"pay_x402">;

/** A wallet that records what it was asked to pay. */
function walletAsked(asked: ToolInput<"pay_x402">[]) {
  return { payX402: async (input: ToolInput<"pay_x402">) => (asked.push(input), PAID) } as unknown as AgentWalletClient;
}

describe("payingFetch", () => {
  it("pays a 402's PAYMENT-REQUIRED through the wallet once and retries with the payment header", async () => {
    const sent: Headers[] = [];
    const resource = async (_input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      sent.push(headers);
      return headers.has("PAYMENT-SIGNATURE")
        ? new Response("paid")
        : new Response("{}", { status: 402, headers: { "PAYMENT-REQUIRED": "eyJ4NDAyVmVyc2lvbiI6Mn0=" } });
    };
    const asked: ToolInput<"pay_x402">[] = [];
    const paying = payingFetch(walletAsked(asked), { credentialId: "cr_1", fetch: resource as typeof fetch });
    const response = await paying("https://api.example.com/report", { headers: { Accept: "application/json" } });
    assert.equal(await response.text(), "paid");
    assert.deepEqual(asked, [{ credential_id: "cr_1", payment_required: "eyJ4NDAyVmVyc2lvbiI6Mn0=" }]);
    assert.equal(sent[1].get("PAYMENT-SIGNATURE"), "cGFpZA==");
    assert.equal(sent[1].get("Accept"), "application/json", "the request's own headers are kept");
  });

  it("hands a V1 402 body over as JSON, and leaves other answers alone", async () => {
    const body = { x402Version: 1, accepts: [] };
    const asked: ToolInput<"pay_x402">[] = [];
    const v1 = async (_input: RequestInfo | URL, init?: RequestInit) =>
      new Headers(init?.headers).has("PAYMENT-SIGNATURE") ? new Response("paid") : Response.json(body, { status: 402 });
    assert.equal(
      await (await payingFetch(walletAsked(asked), { credentialId: "cr_1", fetch: v1 as typeof fetch })("https://x.test")).text(),
      "paid",
    );
    assert.deepEqual(asked[0].payment_required, body);

    const plain = async () => new Response("not x402", { status: 402 });
    const response = await payingFetch(walletAsked(asked), { credentialId: "cr_1", fetch: plain as typeof fetch })("https://x.test");
    assert.equal(response.status, 402);
    assert.equal(asked.length, 1, "a 402 without an x402 requirement is not paid");
  });
});

describe("one-tap payments and paid MCP tools", () => {
  const payment = { x402Version: 2, payload: { signature: "0x12" } };
  const value = Buffer.from(JSON.stringify(payment)).toString("base64");
  /** A wallet whose payments wait for the person: pay_x402 answers a request, which ends `status`. */
  function oneTapWallet(status: "completed" | "rejected") {
    return {
      payX402: async () => ({ header: null, value: null, request_id: "rq_1", approval_url: "https://wallet.test/approvals/rq_1" }),
      waitForRequest: async (requestId: string) => ({
        request_id: requestId,
        status,
        reason: status === "rejected" ? "Rejected by the user" : null,
        ...(status === "completed" && { payment: { header: "PAYMENT-SIGNATURE", value } }),
      }),
    } as unknown as AgentWalletClient;
  }

  it("callPaidTool pays a tool's x402 error once approved and calls again with the PaymentPayload in _meta", async () => {
    const calls: McpToolCall[] = [];
    const tool = async (params: McpToolCall) => {
      calls.push(params);
      return params._meta?.["x402/payment"]
        ? { content: [{ type: "text", text: "sunny" }] }
        : { isError: true, structuredContent: { x402Version: 2, accepts: [] }, content: [] };
    };
    const result = await callPaidTool(
      oneTapWallet("completed"),
      tool,
      { name: "forecast", arguments: { city: "Lisbon" } },
      {
        credentialId: "cr_1",
      },
    );
    assert.deepEqual(result.content, [{ type: "text", text: "sunny" }]);
    assert.deepEqual(calls[1], { name: "forecast", arguments: { city: "Lisbon" }, _meta: { "x402/payment": payment } });
  });

  it("a rejected one-tap payment throws PaymentNotApprovedError and nothing is retried", async () => {
    let sent = 0;
    const resource = async () => (sent++, new Response("{}", { status: 402, headers: { "PAYMENT-REQUIRED": "eyJ4NDAyVmVyc2lvbiI6Mn0=" } }));
    const paying = payingFetch(oneTapWallet("rejected"), { credentialId: "cr_1", fetch: resource as typeof fetch });
    await assert.rejects(paying("https://api.example.com/report"), (error: unknown) => {
      assert.ok(error instanceof PaymentNotApprovedError);
      assert.match(error.message, /rq_1 is rejected \(Rejected by the user\): nothing was paid/);
      return true;
    });
    assert.equal(sent, 1);
  });
});
