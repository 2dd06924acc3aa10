import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { AppError } from "./errors";
import { errorResponse } from "./respond";

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
