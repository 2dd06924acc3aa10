// A real local HTTPS server that publishes client metadata documents (CIMD), with a certificate made
// at test time by openssl. The app trusts it through NODE_EXTRA_CA_CERTS and reaches it on loopback
// because the tests set CLIENT_METADATA_ALLOW_PRIVATE_HOSTS=true.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import type net from "node:net";
import os from "node:os";
import path from "node:path";

/** What the server answers on one path; counts the fetches it served. */
export type Published = { status?: number; headers?: Record<string, string>; body: unknown };

export type DocumentServer = {
  /** the PEM file to give the app as NODE_EXTRA_CA_CERTS */
  caFile: string;
  /** https://localhost:<port><path> */
  url: (path: string) => string;
  publish: (path: string, answer: Published) => void;
  /** the fetches of `path`, or of every path */
  fetches: (path?: string) => number;
  close: () => Promise<void>;
};

export async function startDocumentServer(): Promise<DocumentServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "aw-cimd-"));
  const keyFile = path.join(dir, "key.pem");
  const caFile = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1"],
      ...["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
      ...["-keyout", keyFile, "-out", caFile],
    ],
    { stdio: "ignore" },
  );
  const answers = new Map<string, Published>();
  const counts = new Map<string, number>();
  const server = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(caFile) }, (request, response) => {
    const pathname = new URL(request.url ?? "/", "https://localhost").pathname;
    counts.set(pathname, (counts.get(pathname) ?? 0) + 1);
    const answer = answers.get(pathname);
    if (!answer) return void response.writeHead(404).end();
    const body = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
    response.writeHead(answer.status ?? 200, { "Content-Type": "application/json", ...answer.headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const port = (server.address() as net.AddressInfo).port;
  return {
    caFile,
    url: (pathname) => `https://localhost:${port}${pathname}`,
    publish: (pathname, answer) => void answers.set(pathname, answer),
    fetches: (pathname) => (pathname ? (counts.get(pathname) ?? 0) : [...counts.values()].reduce((sum, count) => sum + count, 0)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        fs.rmSync(dir, { recursive: true, force: true });
      }),
  };
}
