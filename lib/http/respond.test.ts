import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { AppError } from "./errors";
import { errorResponse, json } from "./respond";

async function body(response: Response) {
  return { status: response.status, json: await response.json(), cache: response.headers.get("cache-control") };
}

describe("errorResponse: one shape per protocol, nothing internal", () => {
  it("an /api error is {error, message}, 500s included", async () => {
    assert.deepEqual(await body(errorResponse(new AppError("not_pending", "This request is approved", 409))), {
      status: 409,
      json: { error: "not_pending", message: "This request is approved" },
      cache: "no-store",
    });
    const unexpected = await body(errorResponse(new Error("SQLITE_BUSY at /srv/data/agent-wallet.db")));
    assert.equal(unexpected.status, 500);
    assert.deepEqual(unexpected.json, { error: "server_error", message: "The server could not complete the request" });
  });

  it("zod issues become invalid_input naming the field", async () => {
    const failed = z.object({ name: z.string().min(1, "Name the wallet") }).safeParse({ name: "" });
    assert.equal(failed.success, false);
    const response = await body(errorResponse(failed.error));
    assert.deepEqual(response.json, { error: "invalid_input", message: "name: Name the wallet" });
    assert.equal(response.status, 400);
  });

  it("an unreachable database is a 503 with Retry-After, found through the error's causes; nothing internal shows", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 10.0.0.5:5432"), { code: "ECONNREFUSED" });
    const wrapped = new Error("query failed", { cause: { code: "P1001", message: "Can't reach database server at 10.0.0.5" } });
    for (const error of [refused, wrapped]) {
      const response = errorResponse(error);
      assert.equal(response.status, 503);
      assert.equal(response.headers.get("retry-after"), "5");
      const json = (await response.json()) as { error: string; message: string };
      assert.equal(json.error, "service_unavailable");
      assert.doesNotMatch(json.message, /10\.0\.0\.5/);
    }
  });
});

describe("json: a Response read any way a Response is read", () => {
  const answer = () => json({ id: "rq_1", note: "ünïcode" }, { status: 201, headers: { "Cache-Control": "no-store" } });
  const expected = JSON.stringify({ id: "rq_1", note: "ünïcode" });

  it("reads as text, JSON, bytes and a stream, with its status and headers, once", async () => {
    const response = answer();
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.equal(response.bodyUsed, false);
    assert.equal(await response.text(), expected);
    assert.equal(response.bodyUsed, true);
    await assert.rejects(() => response.text(), TypeError);
    assert.deepEqual(await answer().json(), JSON.parse(expected));
    assert.equal(new TextDecoder().decode(await answer().bytes()), expected);
    assert.equal(await new Response(answer().body).text(), expected);
  });

  it("clones, and is read by a Response made from it as Next's runtime makes one", async () => {
    const response = answer();
    const copy = response.clone();
    assert.equal(await copy.text(), expected);
    assert.equal(await response.text(), expected);
    const remade = new Response(answer().body, answer());
    assert.equal(remade.status, 201);
    assert.equal(await remade.text(), expected);
  });
});
