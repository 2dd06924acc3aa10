import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HttpRequestError, InvalidInputRpcError, RpcRequestError } from "viem";
import { alreadyKnown, nodeWords } from "./reverts";

const RPC_URL = "https://base-mainnet.provider.example/v2/k3yOfTheOperator0123";

/** A node's JSON-RPC error as viem hands it to its caller: its own class around the transport's RpcRequestError. */
const refused = (message: string) =>
  new InvalidInputRpcError(
    new RpcRequestError({ body: { method: "eth_sendRawTransaction" }, error: { code: -32000, message }, url: RPC_URL }),
  );

describe("nodeWords", () => {
  it("is the node's own message, where viem's says 'Missing or invalid parameters'", () => {
    const error = refused("replacement transaction underpriced");
    assert.match(error.shortMessage, /Missing or invalid parameters/);
    assert.equal(nodeWords(error), "replacement transaction underpriced");
  });

  it("holds no web address and nothing of the RPC URL, which may carry a key; its first line only", () => {
    const words = nodeWords(
      refused(`rate limited for k3yOfTheOperator0123 at ${RPC_URL}; see https://docs.provider.example/limits\nstack: at node.js:1`),
    );
    assert.equal(words, "rate limited for … at …; see …");
  });

  it("is null when the node did not answer with an error of its own (a rate limit, a silence)", () => {
    assert.equal(nodeWords(new HttpRequestError({ status: 429, details: "Too Many Requests", url: RPC_URL })), null);
    assert.equal(nodeWords(new Error("socket hang up")), null);
  });
});

describe("alreadyKnown", () => {
  it("is a node saying it holds the transaction already, in each node's words; 'nonce too low' is not", () => {
    for (const message of ["already known", "Known transaction: 0xabc", "ALREADY_EXISTS: already known", "AlreadyKnown"])
      assert.ok(alreadyKnown(refused(message)), message);
    for (const message of ["nonce too low", "replacement transaction underpriced", "insufficient funds for gas * price + value"])
      assert.ok(!alreadyKnown(refused(message)), message);
    assert.ok(
      !alreadyKnown(new HttpRequestError({ status: 503, details: "already known", url: RPC_URL })),
      "only the node's own answer says it",
    );
  });
});
