// The Chromium the browser suites drive (e2e/support/browser.ts): the installed one (CHROMIUM_PATH, by default
// Debian's /usr/bin/chromium), or else the build that the npm package @sparticuz/chromium carries, unpacked once.
// Either is used only after a passkey with PRF was created and used in it through the CDP virtual authenticator,
// which every browser suite relies on. Plain JavaScript: scripts/test.mjs runs it before the test workers.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

/** Headless, as root (no sandbox), and quiet: this machine's network is closed, so nothing calls home. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** The virtual authenticator every browser suite adds (e2e/support/browser.ts): a platform passkey with PRF. */
export const AUTHENTICATOR_OPTIONS = {
  protocol: "ctap2",
  transport: "internal",
  hasResidentKey: true,
  hasUserVerification: true,
  isUserVerified: true,
  hasPrf: true,
  automaticPresenceSimulation: true,
};

/** Creates a passkey with PRF on a localhost page and reads a 32-byte PRF output back in an assertion. */
async function passkeyWithPrfWorks(executablePath, env) {
  const browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS, env, timeout: 30_000 });
  const server = http.createServer((request, response) => response.end("<!doctype html><title>check</title>"));
  try {
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const page = await browser.newPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("WebAuthn.enable", { enableUI: false });
    await cdp.send("WebAuthn.addVirtualAuthenticator", { options: AUTHENTICATOR_OPTIONS });
    await page.goto(`http://localhost:${server.address().port}/`);
    const bytes = await page.evaluate(async () => {
      const salt = { first: new Uint8Array(32).fill(7) };
      // A ceremony the authenticator cannot answer would wait for a person forever.
      const signal = AbortSignal.timeout(15_000);
      const created = await navigator.credentials.create({
        publicKey: {
          challenge: new Uint8Array(32),
          rp: { name: "check", id: "localhost" },
          user: { id: new Uint8Array(16), name: "check", displayName: "check" },
          pubKeyCredParams: [{ type: "public-key", alg: -7 }],
          authenticatorSelection: { residentKey: "required", userVerification: "required" },
          extensions: { prf: { eval: salt } },
        },
        signal,
      });
      const asserted = await navigator.credentials.get({
        publicKey: {
          challenge: new Uint8Array(32),
          rpId: "localhost",
          allowCredentials: [{ type: "public-key", id: created.rawId }],
          userVerification: "required",
          extensions: { prf: { eval: salt } },
        },
        signal,
      });
      return asserted.getClientExtensionResults().prf?.results?.first?.byteLength ?? 0;
    });
    if (bytes !== 32) throw new Error(`its virtual authenticator gave no PRF output (${bytes} bytes)`);
  } finally {
    await browser.close();
    server.close();
    server.closeAllConnections();
  }
}

/** Unpacks the package's Chromium once into a folder named by its version; a run that finds it there reuses it. */
async function packagedChromium() {
  const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.resolve("@sparticuz/chromium"))), "..");
  const { version } = JSON.parse(fs.readFileSync(path.join(packageRoot, "package.json"), "utf8"));
  const folder = path.resolve(`node_modules/.cache/agent-wallet/chromium-${version}`);
  if (!fs.existsSync(folder)) {
    // The package unpacks into os.tmpdir() under fixed names: a staged folder of this run's own, renamed when
    // complete, so that a run beside this one never starts a half-written binary.
    const staged = `${folder}.${process.pid}`;
    fs.mkdirSync(staged, { recursive: true });
    const tmpdir = process.env.TMPDIR;
    process.env.TMPDIR = staged;
    try {
      const { default: packaged } = await import("@sparticuz/chromium");
      await packaged.executablePath();
    } finally {
      if (tmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdir;
    }
    // Its fonts beside the machine's (its own fonts.conf names a fixed folder elsewhere).
    fs.writeFileSync(
      path.join(staged, "fonts.conf"),
      `<?xml version="1.0"?>\n<fontconfig>\n  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n` +
        `  <dir>${folder}/fonts/fonts</dir>\n  <cachedir>${folder}/fonts-cache</cachedir>\n</fontconfig>\n`,
    );
    try {
      fs.renameSync(staged, folder);
    } catch {
      fs.rmSync(staged, { recursive: true, force: true }); // another run unpacked it first
    }
  }
  return {
    executablePath: path.join(folder, "chromium"),
    env: { FONTCONFIG_FILE: path.join(folder, "fonts.conf") },
    name: `@sparticuz/chromium ${version}`,
  };
}

/**
 * The Chromium to use, checked, with the environment variables the browser suites need for it. Throws an Error
 * whose message is the one line saying what to install and why.
 */
export async function chromiumForTests() {
  const installed = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
  const problems = [];
  if (fs.existsSync(installed)) {
    try {
      await passkeyWithPrfWorks(installed, process.env);
      return { executablePath: installed, env: {}, name: installed };
    } catch (error) {
      problems.push(`${installed}: ${firstLine(error)}`);
    }
  } else {
    problems.push(`no Chromium at ${installed}`);
  }
  try {
    const packaged = await packagedChromium();
    await passkeyWithPrfWorks(packaged.executablePath, { ...process.env, ...packaged.env });
    return { ...packaged, name: `${packaged.name} (${problems[0]})` };
  } catch (error) {
    problems.push(`@sparticuz/chromium: ${firstLine(error)}`);
  }
  throw new Error(
    `The browser suites need a Chromium whose virtual authenticator supports passkeys with PRF, and none works ` +
      `(${problems.join("; ")}): install Debian's chromium (apt-get install chromium), or point CHROMIUM_PATH at one.`,
  );
}

const firstLine = (error) => String(error?.message ?? error).split("\n")[0];
