import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { oauthErrorResponse } from "./errors";

describe("oauthErrorResponse", () => {
  it("an OAuth endpoint's unexpected error is {error: server_error, error_description} with CORS", async () => {
    const response = oauthErrorResponse(new Error("connection refused 10.0.0.5"));
    assert.equal(response.headers.get("access-control-allow-origin"), "*");
    assert.deepEqual(await response.json(), { error: "server_error", error_description: "The server could not complete the request" });
  });
});
