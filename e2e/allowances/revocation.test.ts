// Issue 28's last case, end to end: each allowance carries its own revocation, signed with it, so that whatever stops
// it disables it on chain with no further tap and no key — revoking a client whose allowances are on two wallets, the
// client's own token revocation (POST /oauth/revoke, no browser at all), a replayed authorization code, removing the
// wallet. A send that fails because the chain cannot be reached is sent again by the server once it can (the app
// reaches the chain through an endpoint the test cuts; it resends every second here). A pre-signed revocation that is
// not exactly the allowance's, or not the person's, is refused at creation and nothing is stored.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseEther, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { Browser } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RunningApp } from "../support/app";
import type { LocalChain } from "../support/chain";
import { connectAgent, importWallet, newPerson, type Person } from "../support/consent";
import { token } from "../support/oauth";
import { grantAllowanceFor, signedAllowanceFor, startAllowanceApp, type AllowanceApp } from "../support/allowances";
import { db } from "@/lib/db";

describe("pre-signed revocations of allowances", { timeout: 300_000 }, () => {
  let world: AllowanceApp;
  let chain: LocalChain;
  let app: RunningApp;
  let browser: Browser;
  let person: Person;
  let userId: string;
  const wallets: Record<string, { key: PrivateKeyAccount; credentialId: string }> = {};
  const clients: Client[] = [];

  before(async () => {
    ({ chain, app, browser } = world = await startAllowanceApp({
      browser: true,
      rpc: true,
      env: { ALLOWANCE_REVOCATION_RETRY_SECONDS: "1" },
    }));
    person = await newPerson(browser, app, "revoker@example.com", []);
    person.page.on("dialog", (dialog) => void dialog.accept());
    for (const name of ["Alpha", "Beta", "Gamma"]) {
      const key = generatePrivateKey();
      await importWallet(person.page, name, key);
      const credential = await db().credential.findFirstOrThrow({ where: { name } });
      wallets[name] = { key: privateKeyToAccount(key), credentialId: credential.id };
      userId = credential.userId;
    }
  });
  after(async () => {
    for (const client of clients) await client.close();
    await world?.stop();
  });

  /** An agent the person connected with `names` in `allowance` mode, each with an allowance signed by its key. */
  async function agentWithAllowances(agent: string, names: string[]) {
    const { client, provider, code } = await connectAgent(
      app,
      person.page,
      agent,
      names.map((name) => ({ name, mode: "approve" as const })),
    );
    clients.push(client);
    const grant = await db().grant.findFirstOrThrow({ where: { userId, client: { name: agent } } });
    const allowances: { name: string; id: string; hashes: Hex[] }[] = [];
    for (const name of names) {
      const { key, credentialId } = wallets[name];
      const { id, hashes } = await grantAllowanceFor(
        chain,
        key,
        { userId, credentialId, grantId: grant.id },
        { recipients: [world.recipient()], native: parseEther("0.01"), overLimit: "refuse" },
      );
      allowances.push({ name, id, hashes });
    }
    return { provider, code, allowances };
  }

  const status = async (id: string) => (await db().allowance.findUniqueOrThrow({ where: { id } })).status;
  const revokedEvents = (id: string) => db().auditEvent.findMany({ where: { type: "allowance.revoked", data: { contains: id } } });

  /** Waits (at most 30 s) until the allowance is `revoked`: nothing in the browser makes it so. */
  async function revokedInTime(id: string) {
    const deadline = Date.now() + 30_000;
    while ((await status(id)) !== "revoked") {
      assert.ok(Date.now() < deadline, `allowance ${id} is still ${await status(id)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** Disabled on chain, `revoked` with its transaction, audited once with it, and no spend is made from it. */
  async function assertDisabled(allowance: { id: string; hashes: Hex[] }) {
    assert.deepEqual(
      await world.disabledOnChain(allowance.hashes),
      allowance.hashes.map(() => true),
    );
    const row = await db().allowance.findUniqueOrThrow({ where: { id: allowance.id } });
    assert.equal(row.status, "revoked");
    assert.match(row.revocationTx ?? "", /^0x[0-9a-f]{64}$/);
    const events = await revokedEvents(allowance.id);
    assert.equal(events.length, 1);
    assert.equal((JSON.parse(events[0].data) as { txHash: string }).txHash, row.revocationTx);
    const receipt = await chain.client.getTransactionReceipt({ hash: row.revocationTx as Hex });
    assert.equal(receipt.status, "success");
    const { spendFromAllowance, AllowanceRefusal } = await import("@/lib/allowances/spend");
    const refused = await spendFromAllowance(allowance.id, { to: world.recipient(), value: 1n }).catch((error: unknown) => error);
    assert.ok(refused instanceof AllowanceRefusal && refused.reason === "not_active", String(refused));
  }

  it("revoking a client whose allowances are on two wallets disables both on chain, with the one tap of the revocation", async () => {
    const { allowances } = await agentWithAllowances("Two Wallet Agent", ["Alpha", "Beta"]);
    for (const { key } of [wallets.Alpha, wallets.Beta]) assert.equal(await chain.client.getBalance({ address: key.address }), 0n);
    await person.page.goto(`${app.appUrl}/clients`);
    for (const name of ["Alpha", "Beta"]) {
      await person.page
        .getByRole("listitem", { name: "Two Wallet Agent" })
        .getByRole("region", { name: `Allowance of ${name} on Local dev chain` })
        .waitFor();
    }
    await person.page.getByRole("button", { name: "Revoke Two Wallet Agent" }).click();
    await person.page.getByRole("listitem", { name: "Two Wallet Agent" }).getByText("Revoked", { exact: true }).waitFor();
    // the page answered once the chain confirmed: no waiting, no "Revoke allowance" left to tap
    for (const allowance of allowances) await assertDisabled(allowance);
    assert.equal(await person.page.getByRole("button", { name: "Revoke allowance" }).count(), 0);
    for (const { key } of [wallets.Alpha, wallets.Beta]) assert.equal(await chain.client.getBalance({ address: key.address }), 0n);
  });

  it("the client's own token revocation (RFC 7009) disables its allowance on chain with no browser action", async () => {
    const { provider, allowances } = await agentWithAllowances("Token Agent", ["Alpha"]);
    await revokeToken(provider);
    // Another instance sending it at the same time (this process, on the same database and chain): the leases
    // serialize the two, and whichever comes second finds it done, with no error and no second audit.
    const { sendStoredRevocations } = await import("@/lib/allowances/revocation");
    await sendStoredRevocations([allowances[0].id]);
    await revokedInTime(allowances[0].id);
    await assertDisabled(allowances[0]);
  });

  /** The client revokes its own access token (RFC 7009), as an agent that is done does. */
  async function revokeToken(provider: Awaited<ReturnType<typeof agentWithAllowances>>["provider"]) {
    const response = await fetch(`${app.baseUrl}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: provider.tokens()!.access_token, client_id: provider.client!.client_id }),
    });
    assert.equal(response.status, 200, await response.clone().text());
  }

  it("a revocation sent while the chain cannot be reached is sent again once it can, with no browser action", async () => {
    const { provider, allowances } = await agentWithAllowances("Offline Agent", ["Alpha"]);
    const [allowance] = allowances;
    world.rpc!.cut();
    try {
      await revokeToken(provider);
      // stopped here at once; several resends fail while the chain stays out of reach, and none is a spend
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      assert.equal(await status(allowance.id), "revoking");
      assert.deepEqual(
        await world.disabledOnChain(allowance.hashes),
        allowance.hashes.map(() => false),
      );
      assert.equal((await revokedEvents(allowance.id)).length, 0);
    } finally {
      world.rpc!.resume();
    }
    await revokedInTime(allowance.id);
    await assertDisabled(allowance);
    // the failures were logged by what failed, without the chain's endpoint
    assert.match(app.output(), new RegExp(`Sending the revocations of ${allowance.id} failed`));
    assert.ok(!app.output().includes(world.rpc!.url), "the RPC endpoint is not in the log");
  });

  it("a replayed authorization code revokes the client, whose allowance is disabled on chain with no browser action", async () => {
    const { provider, code, allowances } = await agentWithAllowances("Replayed Agent", ["Beta"]);
    const replayed = await token(app, {
      grant_type: "authorization_code",
      code,
      code_verifier: provider.codeVerifier(),
      redirect_uri: provider.callbackUrl,
      client_id: provider.client!.client_id,
    });
    assert.equal(replayed.status, 400, await replayed.clone().text());
    assert.equal(((await replayed.json()) as { error: string }).error, "invalid_grant");
    await revokedInTime(allowances[0].id);
    await assertDisabled(allowances[0]);
    const stopped = await db().auditEvent.findMany({ where: { type: "allowance.stopped", data: { contains: allowances[0].id } } });
    assert.deepEqual(
      stopped.map((event) => (JSON.parse(event.data) as { reason: string }).reason),
      ["its client's token was replayed"],
    );
  });

  it("removing a wallet disables its allowance on chain", async () => {
    const { allowances } = await agentWithAllowances("Gamma Agent", ["Gamma"]);
    await person.page.goto(`${app.appUrl}/`);
    await person.page.getByRole("button", { name: "Remove Gamma" }).click();
    await revokedInTime(allowances[0].id);
    assert.equal(await db().credential.count({ where: { id: wallets.Gamma.credentialId } }), 0);
    await assertDisabled(allowances[0]);
  });

  it("a pre-signed revocation by another key, or for other delegations, is refused at creation and nothing is stored", async () => {
    const { createAllowance } = await import("@/lib/allowances/allowances");
    const { signedAllowanceSchema } = await import("@/lib/allowances/ceremony");
    const owner = { userId, credentialId: "cr_tampered" };
    const key = privateKeyToAccount(generatePrivateKey());
    const shop: Address = world.recipient();
    const { input, now } = await signedAllowanceFor(chain, key, owner, { recipients: [shop] });
    const stranger = await signedAllowanceFor(chain, privateKeyToAccount(generatePrivateKey()), owner, { recipients: [shop] });
    const another = await signedAllowanceFor(chain, key, owner, { recipients: [shop] });
    const before = { allowances: await db().allowance.count(), relayed: await world.relayerNonce() };
    for (const revocation of [stranger.input.revocation, another.input.revocation]) {
      await assert.rejects(
        createAllowance({ ...input, revocation }, now),
        /The allowance's pre-signed revocation is not the wallet's signature over disabling exactly these delegations/,
      );
    }
    assert.equal(await db().allowance.count(), before.allowances, "nothing stored");
    assert.equal(await world.relayerNonce(), before.relayed, "not even the account's code was set");
    // A new allowance without one is not accepted at all.
    const parsed = signedAllowanceSchema.safeParse({ chainId: chain.chainId, overLimit: "ask", delegations: [] });
    assert.ok(!parsed.success && parsed.error.issues.some((issue) => issue.path[0] === "revocation"));
    // The untouched one is.
    await createAllowance(input, now);
    assert.equal(await db().allowance.count(), before.allowances + 1);
  });
});
