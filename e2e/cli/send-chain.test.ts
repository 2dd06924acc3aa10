// `agent-wallet send` as a person types it, as a child process against the started app with personal API keys: a bare
// `--value 0.01` is answered with the unit it most likely meant, and `--chain` may be left out when the wallet can use
// one chain only — the service's only one, or the only one of its chains the credential's limits allow (asked through
// list_credentials and get_policy); with several, the error names them. And a refusal's rule id in --json.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startApp, type RunningApp } from "../support/app";
import { startChain, type LocalChain } from "../support/chain";
import { cliEnv, runCli } from "../support/cli";
import { createUser } from "../support/oauth";
import { db } from "@/lib/db";
import { randomBase62, randomId, sha256Hex } from "@/lib/crypto";
import { createGrant } from "@/lib/oauth/grants";
import type { Policy } from "@/contract";

/** A chain the service lists and nothing here ever calls. */
const OTHER = { id: 4_242, name: "Other chain", rpcUrl: "http://127.0.0.1:9", symbol: "OTH" };

describe("send: its amount and its chain", { timeout: 180_000 }, () => {
  let chain: LocalChain;
  let app: RunningApp;
  let owner: Address;
  let userId: string;
  let credentialId: string;

  before(async () => {
    chain = await startChain();
    app = await startApp({
      env: { CHAINS: JSON.stringify([{ id: chain.chainId, name: "Local dev chain", rpcUrl: chain.rpcUrl, symbol: "ETH" }, OTHER]) },
    });
    owner = privateKeyToAccount(generatePrivateKey()).address;
    await chain.fund(owner, "1");
    userId = (await createUser("sender@example.com")).id;
    credentialId = (await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address: owner } })).id;
  });
  after(async () => {
    await app?.stop();
    await chain?.stop();
  });

  /** The CLI's environment with a new personal API key whose grant gives Main in approve mode with `policy`. */
  async function keyWith(policy: Policy): Promise<NodeJS.ProcessEnv> {
    const key = `svc_live_${randomBase62(43)}`;
    const clientId = randomId("k_");
    await db().$transaction(async (tx) => {
      await tx.client.create({
        data: { id: clientId, kind: "api_key", name: "Sender", userId, keyHash: sha256Hex(key), keyHint: key.slice(-4) },
      });
      await createGrant(tx, { userId, clientId, scope: "mcp", credentials: [{ credentialId, mode: "approve", policy }], now: new Date() });
    });
    return cliEnv({ AGENT_WALLET_API_KEY: key, AGENT_WALLET_URL: app.baseUrl }).env;
  }

  it("a bare --value with a fraction asks whether the coin was meant, and nothing is asked of the person", async () => {
    const env = await keyWith({});
    const bare = await runCli(["send", "Main", "--to", owner, "--value", "0.01", "--chain", String(chain.chainId), "--no-wait"], env);
    assert.equal(bare.code, 1, bare.stderr);
    assert.match(bare.stderr, /^agent-wallet: "0\.01" has no unit, and a bare number is wei: did you mean 0\.01eth\?/);
    assert.equal(await db().agentRequest.count({ where: { credentialId } }), 0);
  });

  it("without --chain and several chains the wallet may use: the error names them, and nothing is asked", async () => {
    const env = await keyWith({});
    const several = await runCli(["send", "Main", "--to", owner, "--value", "0.01eth", "--no-wait"], env);
    assert.equal(several.code, 1, several.stderr);
    assert.match(
      several.stderr,
      new RegExp(
        `This wallet can use several chains: ${chain.chainId} \\(Local dev chain\\), 4242 \\(Other chain\\)\\. Name one with --chain <id>`,
      ),
    );
    assert.equal(await db().agentRequest.count({ where: { credentialId } }), 0);
  });

  it("without --chain, the only chain the credential's limits allow", async () => {
    const env = await keyWith({ chains: [chain.chainId], native: { per_transaction: String(parseEther("0.05")) } });
    const sent = await runCli(["send", "Main", "--to", owner, "--value", "0.01eth", "--no-wait", "--json"], env);
    assert.equal(sent.code, 0, sent.stderr);
    const request = JSON.parse(sent.stdout);
    assert.equal(request.status, "pending");
    assert.equal(request.chain_id, chain.chainId);

    // A refusal in words, its rule for programs beside them.
    const refused = await runCli(["send", "Main", "--to", owner, "--value", "0.06eth", "--no-wait", "--json"], env);
    assert.equal(refused.code, 4, refused.stderr);
    const { error } = JSON.parse(refused.stderr);
    assert.match(
      error.message,
      /^Refused by the spending policy: 0\.06 ETH is over your limit of 0\.05 ETH a transaction for Main on Local dev chain\./,
    );
    assert.equal(error.details.rule, "native.per_transaction");
  });
});
