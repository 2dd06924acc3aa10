// Loaded into the benchmark's servers with `--import` (never into production): records how long each HTTP request
// took inside the server, from its headers' arrival to the response's last byte, so `npm run bench` can tell the
// server's own latency from the time a request waits for a CPU the load generator shares.
// Lines of "<epoch ms at arrival> <ms in the server>" are appended to BENCH_TIMING_FILE every 200 ms.
import fs from "node:fs";
import http from "node:http";

const file = process.env.BENCH_TIMING_FILE;
if (file) {
  let lines = "";
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, request, response) {
    if (event === "request") {
      const arrived = performance.now();
      response.once("finish", () => {
        lines += `${Math.round(performance.timeOrigin + arrived)} ${(performance.now() - arrived).toFixed(2)}\n`;
      });
    }
    return emit.apply(this, arguments);
  };
  const flush = () => {
    if (!lines) return;
    fs.appendFileSync(file, lines);
    lines = "";
  };
  setInterval(flush, 200).unref();
  process.on("exit", flush);
}
