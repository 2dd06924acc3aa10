import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { apiKeySnippets, clientSetups } from "./client-setup";

const EXAMPLE = "https://wallet.example.com";

/** The fenced code blocks of a Markdown file, in order. */
function codeBlocks(markdown: string): { language: string; code: string }[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)\n```$/gm)].map(([, language, code]) => ({ language, code }));
}

describe("client setup snippets", () => {
  it("docs/clients.md's client guides show exactly the page's snippets, in the same order, for the example URL", () => {
    // the guides the page mirrors; paying x402 APIs, after them, is the SDK's own and names no deployment
    const [guides, payments] = fs.readFileSync("docs/clients.md", "utf8").split("\n## Paying x402 APIs\n");
    assert.ok(payments, "docs/clients.md has its x402 section");
    const documented = codeBlocks(guides);
    const generated = clientSetups(EXAMPLE).flatMap((setup) => setup.snippets.map(({ language, code }) => ({ language, code })));
    assert.deepEqual(documented, generated);
  });

  it("every snippet names this deployment's URL and no other", () => {
    const base = "http://wallet.internal:8080";
    for (const setup of clientSetups(base)) {
      for (const snippet of setup.snippets) {
        assert.ok(snippet.code.includes(base), `${snippet.what} names ${base}`);
        assert.ok(!snippet.code.includes(EXAMPLE), `${snippet.what} has no example URL left`);
        const urls = snippet.code.match(/https?:\/\/[^\s"]+/g) ?? [];
        for (const url of urls) assert.ok(url === base || url === `${base}/mcp`, `${snippet.what}: ${url}`);
      }
    }
  });

  it("every MCP client is pointed at the MCP endpoint; copy buttons have distinct names", () => {
    const setups = clientSetups(EXAMPLE);
    for (const setup of setups.filter((entry) => entry.id !== "cli-sdk")) {
      for (const snippet of setup.snippets) assert.ok(snippet.code.includes(`${EXAMPLE}/mcp`), snippet.what);
    }
    const names = setups.flatMap((setup) => setup.snippets.map((snippet) => snippet.what));
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual(
      setups.map((setup) => setup.client),
      ["Claude Code", "Claude Desktop (through mcp-remote)", "VS Code", "Cursor", "Codex", "MCP Inspector", "Our CLI and SDK"],
    );
  });

  it("a new API key comes with an environment line and the page's own CLI, SDK and MCP lines, which read it from there", () => {
    const key = "svc_live_0123456789abcdef";
    const snippets = apiKeySnippets(EXAMPLE, key);
    assert.deepEqual(
      snippets.map((snippet) => snippet.what),
      ["environment line", "CLI command", "SDK example", "Claude Code command with an API key"],
    );
    assert.equal(snippets[0].code, `export AGENT_WALLET_API_KEY=${key}`);
    assert.equal(snippets[1].code, `npx agent-wallet status --base-url ${EXAMPLE}`);
    const shown = clientSetups(EXAMPLE).flatMap((setup) => setup.snippets);
    for (const snippet of snippets.slice(2))
      assert.ok(
        shown.some((entry) => entry.code === snippet.code),
        snippet.what,
      );
    for (const snippet of snippets.slice(1)) {
      assert.ok(!snippet.code.includes(key), `${snippet.what} keeps the key out`);
      assert.match(snippet.code, /AGENT_WALLET_API_KEY|agent-wallet status/);
    }
  });
});
