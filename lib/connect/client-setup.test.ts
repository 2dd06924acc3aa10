import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { clientSetups } from "./client-setup";

const EXAMPLE = "https://wallet.example.com";

/** The fenced code blocks of a Markdown file, in order. */
function codeBlocks(markdown: string): { language: string; code: string }[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)\n```$/gm)].map(([, language, code]) => ({ language, code }));
}

describe("client setup snippets", () => {
  it("docs/clients.md shows exactly the page's snippets, in the same order, for the example URL", () => {
    const documented = codeBlocks(fs.readFileSync("docs/clients.md", "utf8"));
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
});
