// The production server sends the build's JavaScript compressed: in Brotli to a browser that accepts it (once the
// server has compressed that file, in the background from its start), in gzip to one that accepts only gzip, and the
// bytes are the build's own either way.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import zlib from "node:zlib";
import { startApp, type RunningApp } from "../support/app";

/** A raw GET (fetch would decompress the body and hide the encoding). */
function get(url: string, acceptEncoding: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { "Accept-Encoding": acceptEncoding } }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      })
      .on("error", reject);
  });
}

describe("the production server's JavaScript", () => {
  let app: RunningApp;
  before(async () => {
    app = await startApp();
  });
  after(async () => {
    await app?.stop();
  });

  it("is sent in Brotli to browsers that accept it, in gzip to the others, the same bytes either way", async () => {
    const html = (await get(`${app.appUrl}/`, "identity")).body.toString();
    const scripts = [...html.matchAll(/<script[^>]* src="(\/_next\/static\/[^"]+\.js)"/g)].map((match) => match[1]);
    assert.ok(scripts.length > 0, "the sign-in page names its scripts");
    for (const script of scripts) {
      const url = `${app.appUrl}${script}`;
      const plain = await get(url, "identity");
      assert.equal(plain.status, 200);
      let brotli = await get(url, "gzip, deflate, br, zstd");
      for (let tries = 0; brotli.headers["content-encoding"] !== "br"; tries++) {
        assert.equal(brotli.headers["content-encoding"], "gzip", "until its Brotli is ready, Next's gzip");
        assert.ok(tries < 300, `${script} never came in Brotli`);
        await new Promise((resolve) => setTimeout(resolve, 200));
        brotli = await get(url, "gzip, deflate, br, zstd");
      }
      assert.deepEqual(zlib.brotliDecompressSync(brotli.body), plain.body);
      assert.equal(brotli.headers["vary"], "Accept-Encoding");
      assert.equal(brotli.headers["cache-control"], "public, max-age=31536000, immutable");
      assert.equal(brotli.headers["x-content-type-options"], "nosniff");
      assert.match(brotli.headers["content-type"] ?? "", /^application\/javascript/);

      const gzip = await get(url, "gzip, br;q=0");
      assert.equal(gzip.headers["content-encoding"], "gzip");
      assert.deepEqual(zlib.gunzipSync(gzip.body), plain.body);
    }
  });
});
