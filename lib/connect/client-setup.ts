// How each MCP client connects to this deployment: the one source of the setup snippets. The /connect page
// shows them for the deployment's own BASE_URL; docs/clients.md shows them for https://wallet.example.com,
// and client-setup.test.ts keeps its code blocks equal to these.

export type Snippet = {
  /** what the copy button copies: "Copy <what>" */
  what: string;
  language: "sh" | "json" | "toml" | "ts";
  code: string;
};

export type ClientSetup = {
  id: string;
  client: string;
  /** one sentence on where the snippet goes; `code` in backticks */
  where: string;
  snippets: Snippet[];
};

export function clientSetups(baseUrl: string): ClientSetup[] {
  const mcp = `${baseUrl}/mcp`;
  return [
    {
      id: "claude-code",
      client: "Claude Code",
      where: "Run this in a terminal, then `/mcp` in a Claude Code session: pick `agent-wallet` and authenticate.",
      snippets: [
        { what: "Claude Code command", language: "sh", code: `claude mcp add --transport http agent-wallet ${mcp}` },
        {
          what: "Claude Code command with an API key",
          language: "sh",
          code: `claude mcp add --transport http agent-wallet ${mcp} \\\n  --header "Authorization: Bearer $AGENT_WALLET_API_KEY"`,
        },
      ],
    },
    {
      id: "claude-desktop",
      client: "Claude Desktop (through mcp-remote)",
      where: "Add this to `claude_desktop_config.json` and restart Claude Desktop; mcp-remote opens the consent screen in your browser.",
      snippets: [
        {
          what: "Claude Desktop configuration",
          language: "json",
          code: `{
  "mcpServers": {
    "agent-wallet": {
      "command": "npx",
      "args": ["-y", "mcp-remote", "${mcp}"]
    }
  }
}`,
        },
        {
          what: "Claude Desktop configuration with an API key",
          language: "json",
          code: `{
  "mcpServers": {
    "agent-wallet": {
      "command": "npx",
      "args": ["-y", "mcp-remote", "${mcp}", "--header", "Authorization:\${AGENT_WALLET_AUTH}"],
      "env": { "AGENT_WALLET_AUTH": "Bearer svc_live_…" }
    }
  }
}`,
        },
      ],
    },
    {
      id: "vs-code",
      client: "VS Code",
      where: "Put this in `.vscode/mcp.json` (or the user `mcp.json`); VS Code runs the sign-in when the server first asks.",
      snippets: [
        {
          what: "VS Code configuration",
          language: "json",
          code: `{
  "servers": {
    "agent-wallet": {
      "type": "http",
      "url": "${mcp}"
    }
  }
}`,
        },
        {
          what: "VS Code configuration with an API key",
          language: "json",
          code: `{
  "inputs": [{ "type": "promptString", "id": "agent-wallet-key", "description": "Agent Wallet API key", "password": true }],
  "servers": {
    "agent-wallet": {
      "type": "http",
      "url": "${mcp}",
      "headers": { "Authorization": "Bearer \${input:agent-wallet-key}" }
    }
  }
}`,
        },
      ],
    },
    {
      id: "cursor",
      client: "Cursor",
      where: "Put this in `~/.cursor/mcp.json` (every project) or `.cursor/mcp.json` (one project).",
      snippets: [
        {
          what: "Cursor configuration",
          language: "json",
          code: `{
  "mcpServers": {
    "agent-wallet": {
      "url": "${mcp}"
    }
  }
}`,
        },
        {
          what: "Cursor configuration with an API key",
          language: "json",
          code: `{
  "mcpServers": {
    "agent-wallet": {
      "url": "${mcp}",
      "headers": { "Authorization": "Bearer \${env:AGENT_WALLET_API_KEY}" }
    }
  }
}`,
        },
      ],
    },
    {
      id: "codex",
      client: "Codex",
      where: "Put this in `~/.codex/config.toml`, then run `codex mcp login agent-wallet` to sign in.",
      snippets: [
        { what: "Codex configuration", language: "toml", code: `[mcp_servers.agent-wallet]\nurl = "${mcp}"` },
        {
          what: "Codex configuration with an API key",
          language: "toml",
          code: `[mcp_servers.agent-wallet]\nurl = "${mcp}"\nbearer_token_env_var = "AGENT_WALLET_API_KEY"`,
        },
      ],
    },
    {
      id: "mcp-inspector",
      client: "MCP Inspector",
      where: "The Inspector's command line (Node 22.19 or later), handy in CI with an API key.",
      snippets: [
        {
          what: "MCP Inspector commands",
          language: "sh",
          code: `npx @modelcontextprotocol/inspector --cli ${mcp} --transport http \\
  --header "Authorization: Bearer $AGENT_WALLET_API_KEY" --method tools/list

npx @modelcontextprotocol/inspector --cli ${mcp} --transport http \\
  --header "Authorization: Bearer $AGENT_WALLET_API_KEY" --method tools/call --tool-name list_credentials`,
        },
      ],
    },
    {
      id: "cli-sdk",
      client: "Our CLI and SDK",
      where: "The `agent-wallet` command line, and the typed SDK for your own scripts.",
      snippets: [
        {
          what: "CLI commands",
          language: "sh",
          code: `# shows a code and a QR code: approve on any device with your passkey
npx agent-wallet login --base-url ${baseUrl}
# the connection, your grants and pending requests
npx agent-wallet status`,
        },
        {
          what: "SDK example",
          language: "ts",
          code: `import { AgentWalletClient } from "agent-wallet/sdk";
const wallet = new AgentWalletClient({ baseUrl: "${baseUrl}", apiKey: process.env.AGENT_WALLET_API_KEY });
const { credentials } = await wallet.listCredentials();`,
        },
      ],
    },
  ];
}

/**
 * A new personal API key, ready to paste: the line that puts it in the environment, then one line each for the
 * CLI, the SDK and an MCP client, all reading it from there (the key is in one line only, never in a config file).
 */
export function apiKeySnippets(baseUrl: string, key: string): Snippet[] {
  const setups = clientSetups(baseUrl);
  const reused = (what: string) => setups.flatMap((setup) => setup.snippets).find((snippet) => snippet.what === what)!;
  return [
    { what: "environment line", language: "sh", code: `export AGENT_WALLET_API_KEY=${key}` },
    { what: "CLI command", language: "sh", code: `npx agent-wallet status --base-url ${baseUrl}` },
    reused("SDK example"),
    reused("Claude Code command with an API key"),
  ];
}
