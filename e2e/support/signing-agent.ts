// A suite's person with a funded wallet on a local chain and an MCP agent granted it in approve mode: started
// before the suite's tests (with the app and a browser), stopped after. Read its fields inside tests.
import { after, before } from "node:test";
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Address } from "viem";
import { startApp, type RunningApp } from "./app";
import { launchBrowser } from "./browser";
import { chainsSetting, startChain, type LocalChain } from "./chain";
import { connectAgent, newPerson, type Person } from "./consent";
import { db } from "@/lib/db";
import type { RequestView } from "@/contract";

export type SigningAgent = {
  chain: LocalChain;
  app: RunningApp;
  browser: Browser;
  person: Person;
  agent: Client;
  wallet: { id: string; address: Address };
  /** The agent's current access token, for the SDK beside its MCP client. */
  accessToken: () => string;
  /** A sensitive tool call on the wallet that must succeed: the pending request it creates. */
  ask: (tool: string, args: Record<string, unknown>) => Promise<RequestView>;
};

export function signingAgent(options: {
  email: string;
  agentName: string;
  fund?: string;
  explorerUrl?: string;
  /** More settings for the app, from what is deployed on the chain before it starts. */
  env?: (chain: LocalChain) => Promise<Record<string, string>>;
}): SigningAgent {
  const suite = {
    ask: async (tool: string, args: Record<string, unknown>) => {
      const result = (await suite.agent.callTool({ name: tool, arguments: { credential_id: suite.wallet.id, ...args } })) as {
        isError?: boolean;
        structuredContent?: unknown;
        content?: { text?: string }[];
      };
      assert.ok(!result.isError, `${tool} failed: ${result.content?.[0]?.text}`);
      return result.structuredContent as RequestView;
    },
  } as SigningAgent;
  before(async () => {
    suite.chain = await startChain();
    const more = (await options.env?.(suite.chain)) ?? {};
    suite.app = await startApp({ env: { CHAINS: chainsSetting(suite.chain, { explorerUrl: options.explorerUrl }), ...more } });
    suite.browser = await launchBrowser();
    suite.person = await newPerson(suite.browser, suite.app, options.email, ["Main"]);
    const main = await db().credential.findFirstOrThrow({ where: { name: "Main" } });
    suite.wallet = { id: main.id, address: main.address as Address };
    await suite.chain.fund(suite.wallet.address, options.fund ?? "10");
    // These suites show the person every kind of request, unlimited approvals and calls the wallet cannot read among
    // them: the grant lets them through to the person rather than refusing them by the default rule.
    const grant = { name: "Main", mode: "approve", unlimitedApprovals: "allow" } as const;
    const connected = await connectAgent(suite.app, suite.person.page, options.agentName, [grant]);
    suite.agent = connected.client;
    suite.accessToken = () => connected.provider.tokens()!.access_token;
  });
  after(async () => {
    await suite.agent?.close().catch(() => {});
    await suite.browser?.close();
    await suite.app?.stop();
    await suite.chain?.stop();
  });
  return suite;
}
