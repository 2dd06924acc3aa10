// The delegate key with several instances on one PostgreSQL database, as docs/operations.md sets them up: each with its
// own data folder, ALLOWANCE_KEY_SECRET shared from the environment. Every instance pays from allowances with the one
// stored key; rotating the secret (the new kid:secret first, the old second) seals the stored key again under the new
// kid, after which the old secret can go — and an instance left with only the old one says which setting is wrong.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createPostgresDatabase, startApp, type PostgresDatabase, type RunningApp } from "../support/app";
import { grantAllowanceFor, relayersSetting } from "../support/allowances";
import { chainsSetting, startChain, type LocalChain } from "../support/chain";
import { deployFramework, frameworksSetting } from "@/test-chain/delegation-framework";
import { connectWithBearer } from "../support/mcp-client";
import { obtainTokens } from "../support/oauth";
import { db } from "@/lib/db";
import { randomId } from "@/lib/crypto";
import type { RequestView } from "@/contract";

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text: string }[] };

const secret = () => randomBytes(32).toString("base64url");

describe("the delegate key across instances on PostgreSQL", { timeout: 300_000 }, () => {
  const oldSecret = secret();
  const newSecret = secret();
  let chain: LocalChain;
  let database: PostgresDatabase;
  let shared: Record<string, string>;
  const running: RunningApp[] = [];
  const clients: Client[] = [];

  before(async () => {
    chain = await startChain();
    const environment = await deployFramework(chain);
    database = await createPostgresDatabase();
    shared = {
      CHAINS: chainsSetting(chain),
      ALLOWANCE_FRAMEWORKS: frameworksSetting(chain, environment),
      ALLOWANCE_RELAYERS: relayersSetting(chain),
      JWT_SIGNING_KEYS: `k1:${secret()}`,
      SESSION_SECRET: secret(),
    };
  });
  after(async () => {
    for (const client of clients) await client.close();
    for (const app of running.reverse()) await app.stop();
    await chain?.stop();
    await database?.drop();
  });

  /** An instance on the one database with a data folder of its own, so nothing generated there is shared. */
  async function instance(allowanceKeySecret: string): Promise<RunningApp> {
    const app = await startApp({ databaseUrl: database.url, env: { ...shared, ALLOWANCE_KEY_SECRET: allowanceKeySecret } });
    running.push(app);
    return app;
  }

  /** Through `app`, an agent's payment from the allowance its person signed (no one at a browser). */
  async function payThrough(app: RunningApp): Promise<ToolResult> {
    const person = privateKeyToAccount(generatePrivateKey());
    await chain.fund(person.address, "1");
    let credentialId = "";
    const { user, grantId, tokens } = await obtainTokens(app, {
      credentials: async (userId) => {
        credentialId = (
          await db().credential.create({ data: { id: randomId("cr_"), userId, name: "Main", kind: "evm", address: person.address } })
        ).id;
        return [{ credentialId, mode: "approve" }];
      },
    });
    const shop = privateKeyToAccount(generatePrivateKey()).address;
    await grantAllowanceFor(chain, person, { userId: user.id, credentialId, grantId }, { recipients: [shop] });
    const client = await connectWithBearer(app.baseUrl, tokens.access_token);
    clients.push(client);
    return (await client.callTool({
      name: "send_transaction",
      arguments: { credential_id: credentialId, chain_id: chain.chainId, to: shop, value: String(parseEther("0.001")) },
    })) as ToolResult;
  }

  async function paysThrough(app: RunningApp): Promise<void> {
    const result = await payThrough(app);
    assert.notEqual(result.isError, true, `${result.content[0]?.text}\n${app.output()}`);
    assert.equal((result.structuredContent as RequestView).status, "completed");
  }

  const stored = () => db().delegateKey.findMany();

  it("two instances, each with its own data folder, sharing the secret: both pay with the one delegate key", async () => {
    const [first, second] = [await instance(`k1:${oldSecret}`), await instance(`k1:${oldSecret}`)];
    await paysThrough(first);
    await paysThrough(second);
    const rows = await stored();
    assert.equal(rows.length, 1);
    assert.match(rows[0].sealed, /^k1\./, "sealed under the kid k1");
    for (const app of [first, second])
      assert.equal(fs.existsSync(path.join(app.dataDir, "allowance-key-secret.json")), false, "no secret generated into a data folder");
  });

  it("rotated, the old secret second: the stored key is sealed again under the new kid, and then the old secret can go", async () => {
    const [sealedOld] = await stored();
    const rotated = await instance(`k2:${newSecret},k1:${oldSecret}`);
    await paysThrough(rotated);
    const [sealedNew] = await stored();
    assert.equal(sealedNew.address, sealedOld.address, "the same delegate key");
    assert.match(sealedNew.sealed, /^k2\./, "sealed again under the kid k2");
    assert.match(rotated.output(), /The delegate key is now sealed under ALLOWANCE_KEY_SECRET's first secret/, "says so once done");
    await paysThrough(await instance(`k2:${newSecret}`));
  });

  it("an instance with only a secret that no longer opens the key refuses to pay, naming ALLOWANCE_KEY_SECRET and no secret", async () => {
    const stale = await instance(`k1:${oldSecret}`);
    const result = await payThrough(stale);
    assert.equal(result.isError, true);
    assert.match(stale.output(), /no secret in ALLOWANCE_KEY_SECRET opens it/);
    for (const value of [oldSecret, newSecret]) {
      assert.ok(!stale.output().includes(value), "no secret in the log");
      assert.ok(!JSON.stringify(result).includes(value), "no secret in the answer");
    }
  });
});
