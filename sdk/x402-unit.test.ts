import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { AgentWalletClient } from "./client";
import type { ToolInput, ToolOutput } from "../contract";
import { InvalidInputError, PaymentNotApprovedError } from "./errors";
import { callPaidTool, payingFetch, type McpToolCall } from "./x402";
import { maxInBaseUnits, mostFor, narrowed, networkChainId, readRequirement, sameResource, sameTool } from "./x402-guard";

const PAID = { header: "PAYMENT-SIGNATURE", value: "cGFpZA==" } as ToolOutput<"pay_x402">;
const USDC = "0x" + "a".repeat(40);
const offer = { scheme: "exact", network: "eip155:8453", asset: USDC, payTo: "0x" + "b".repeat(40), maxTimeoutSeconds: 60 };
/** A V2 requirement for `url`, as a PAYMENT-REQUIRED header's value: 0.01 USDC. */
const header = (url: string) =>
  Buffer.from(JSON.stringify({ x402Version: 2, resource: { url }, accepts: [{ ...offer, amount: "10000" }] })).toString("base64");
/** get_balance's answer for the token: USDC, 6 decimals. */
const getBalance = async () => ({ tokens: [{ token: USDC, symbol: "USDC", decimals: 6 }] });

/** A wallet that records what it was asked to pay. */
function walletAsked(asked: ToolInput<"pay_x402">[]) {
  return { getBalance, payX402: async (input: ToolInput<"pay_x402">) => (asked.push(input), PAID) } as unknown as AgentWalletClient;
}

describe("payingFetch", () => {
  it("pays a 402's PAYMENT-REQUIRED through the wallet once and retries with the payment header", async () => {
    const sent: Headers[] = [];
    const resource = async (_input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      sent.push(headers);
      return headers.has("PAYMENT-SIGNATURE")
        ? new Response("paid")
        : new Response("{}", { status: 402, headers: { "PAYMENT-REQUIRED": header("https://api.example.com/report?city=Porto") } });
    };
    const asked: ToolInput<"pay_x402">[] = [];
    const paying = payingFetch(walletAsked(asked), { credentialId: "cr_1", fetch: resource as typeof fetch });
    const response = await paying("https://api.example.com/report", { headers: { Accept: "application/json" } });
    assert.equal(await response.text(), "paid");
    assert.deepEqual(asked, [{ credential_id: "cr_1", payment_required: header("https://api.example.com/report?city=Porto") }]);
    assert.equal(sent[1].get("PAYMENT-SIGNATURE"), "cGFpZA==");
    assert.equal(sent[1].get("Accept"), "application/json", "the request's own headers are kept");
  });

  it("hands a V1 402 body over as JSON, and leaves other answers alone", async () => {
    const body = {
      x402Version: 1,
      accepts: [{ ...offer, network: "base", maxAmountRequired: "10000", resource: "https://x.test/", description: "", mimeType: "" }],
    };
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
      getBalance,
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
        : {
            isError: true,
            structuredContent: { x402Version: 2, resource: { url: "mcp://tool/forecast" }, accepts: [{ ...offer, amount: "10000" }] },
            content: [],
          };
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
    const resource = async () => (
      sent++,
      new Response("{}", { status: 402, headers: { "PAYMENT-REQUIRED": header("https://api.example.com/report") } })
    );
    const paying = payingFetch(oneTapWallet("rejected"), { credentialId: "cr_1", fetch: resource as typeof fetch });
    await assert.rejects(paying("https://api.example.com/report"), (error: unknown) => {
      assert.ok(error instanceof PaymentNotApprovedError);
      assert.match(error.message, /rq_1 is rejected \(Rejected by the user\): nothing was paid/);
      return true;
    });
    assert.equal(sent, 1);
  });
});

describe("what the agent's own side pays (x402-guard)", () => {
  it("a requirement is for the URL fetched when its origin and path are the same; the query and fragment are not compared", () => {
    const fetched = "https://api.example.com/report?city=Porto";
    for (const same of [
      "https://api.example.com/report",
      "https://API.example.com:443/report?city=Lisbon",
      "https://api.example.com/report#x",
    ])
      assert.equal(sameResource(fetched, same), true, same);
    for (const other of [
      "http://api.example.com/report",
      "https://api.example.com:8443/report",
      "https://evil.example.com/report",
      "https://api.example.com/report/",
      "https://api.example.com/other",
      "/report",
      "",
      "not a url",
    ])
      assert.equal(sameResource(fetched, other), false, other);
  });

  it("a most that is no amount in whole tokens is refused before anything is fetched", () => {
    const wallet = walletAsked([]);
    assert.throws(
      () => payingFetch(wallet, { credentialId: "cr_1", maxPerPayment: { USDC: "lots" } }),
      (error: unknown) => {
        assert.ok(error instanceof InvalidInputError);
        assert.match(error.message, /maxPerPayment\.USDC must be an amount in whole tokens, such as "0\.50"/);
        return true;
      },
    );
  });

  it("a paid tool's requirement names the tool called: an mcp: URL ending in its name, or exactly the one expected", () => {
    assert.equal(sameTool("forecast", "mcp://tool/forecast"), true);
    assert.equal(sameTool("forecast", "mcp://paid-weather/tools/forecast"), true);
    assert.equal(sameTool("forecast", "mcp://tool/transfer"), false);
    assert.equal(sameTool("forecast", "https://api.example.com/forecast"), false, "an http resource is no tool");
    assert.equal(sameTool("forecast", "mcp://paid-weather/tools/forecast", "mcp://paid-weather/tools/forecast"), true);
    assert.equal(sameTool("forecast", "mcp://other/tools/forecast", "mcp://paid-weather/tools/forecast"), false);
  });

  it("a most in whole tokens is exact in base units, cut down to the token's decimals; the mosts apply by address or symbol", () => {
    assert.equal(maxInBaseUnits("0.50", 6), 500_000n);
    assert.equal(maxInBaseUnits("2", 18), 2n * 10n ** 18n);
    assert.equal(maxInBaseUnits(".1", 6), 100_000n);
    assert.equal(maxInBaseUnits("0.1234567", 6), 123_456n, "never above the most given");
    assert.throws(() => maxInBaseUnits("1e3", 6), /not an amount in whole tokens/);
    const token = { address: USDC, symbol: "USDC" };
    assert.equal(mostFor(undefined, token), "0.10", "the default most");
    assert.equal(mostFor({ USDC: "0.50" }, token), "0.50");
    assert.equal(mostFor({ [USDC.toUpperCase().replace("0X", "0x")]: "1" }, token), "1");
    assert.equal(mostFor({ EURC: "1" }, token), null, "a most named for other tokens only: none for this one");
    assert.equal(mostFor({ usdc: "1" }, token), null, "symbols are compared exactly");
  });

  it("reads V1 and V2 requirements, and narrows one to the offers kept in the form it was given", async () => {
    const two = Buffer.from(
      JSON.stringify({
        x402Version: 2,
        resource: { url: "https://a.test/r" },
        accepts: [
          { ...offer, amount: "1" },
          { ...offer, amount: "2" },
        ],
      }),
    ).toString("base64");
    assert.deepEqual(
      readRequirement(two)?.accepts.map((each) => [each.amount, each.chainId, each.resource]),
      [
        ["1", 8453, "https://a.test/r"],
        ["2", 8453, "https://a.test/r"],
      ],
    );
    assert.equal(
      narrowed(two, () => true),
      two,
      "all kept: exactly as given",
    );
    const less = narrowed(two, (index) => index === 1) as string;
    assert.deepEqual(
      readRequirement(less)?.accepts.map((each) => each.amount),
      ["2"],
    );
    const v1 = { x402Version: 1, accepts: [{ ...offer, network: "base-sepolia", maxAmountRequired: "5", resource: "https://a.test/r" }] };
    assert.equal(readRequirement(v1)?.accepts[0].chainId, null, "a V1 name is read only when it is needed");
    assert.equal(await networkChainId("base-sepolia"), 84532);
    assert.equal(await networkChainId("eip155:31337"), 31337);
    assert.equal(await networkChainId("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"), null);
    assert.equal(await networkChainId("no-such-chain"), null);
    assert.equal(readRequirement("not base64 !"), null);
    assert.equal(readRequirement({ x402Version: 3, accepts: [offer] }), null);
  });
});
