// The benchmark's open-loop load generator, in a process of its own with nothing else in it: one request every
// 1/rate s whatever the answers do, on keep-alive connections, for the latency at a steady load. autocannon's own
// rate limit sends each second's requests in a burst at its start, which measures the queue; and run inside
// scripts/bench.ts, among its database client and seeded rows, fetch and the collector added their own pauses to
// every latency.
//   node scripts/bench-steady.mjs '<{"url","method","headers","body","rate","duration"} as JSON>'
// Prints {"latencies": [ms…], "errors": n, "seconds": s} on stdout.
import http from "node:http";

const { url, method = "POST", headers = {}, body, rate, duration } = JSON.parse(process.argv[2]);
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const payload = body === undefined ? undefined : Buffer.from(body);
const requestHeaders = { ...headers, ...(payload ? { "Content-Length": String(payload.length) } : {}) };

const latencies = [];
let errors = 0;
/** What each error was (a status code, or the connection's error code), told on stderr at the end. */
const errorKinds = new Map();
const tally = (kind) => {
  errors++;
  errorKinds.set(kind, (errorKinds.get(kind) ?? 0) + 1);
};
let pending = 0;

function send() {
  const sent = performance.now();
  pending++;
  const request = http.request(target, { method, headers: requestHeaders, agent }, (response) => {
    response.on("data", () => {});
    response.on("end", () => {
      latencies.push(performance.now() - sent);
      if (response.statusCode >= 400) tally(`HTTP ${response.statusCode}`);
      done();
    });
  });
  request.on("error", (error) => {
    tally(error.code ?? error.message);
    done();
  });
  request.end(payload);
}

const start = performance.now();
const total = Math.round(rate * duration);
let sentCount = 0;

function done() {
  pending--;
  if (sentCount === total && pending === 0) {
    const seconds = (performance.now() - start) / 1000;
    agent.destroy();
    if (errors) process.stderr.write(`${url}: ${[...errorKinds].map(([kind, count]) => `${count} × ${kind}`).join(", ")}\n`);
    process.stdout.write(JSON.stringify({ latencies, errors, seconds }));
  }
}

// Each tick sends every request that has come due, so a late timer never lowers the rate.
function tick() {
  const now = performance.now();
  while (sentCount < total && start + (sentCount * 1000) / rate <= now) {
    sentCount++;
    send();
  }
  if (sentCount < total) setTimeout(tick, Math.max(0, start + (sentCount * 1000) / rate - performance.now()));
}
tick();
