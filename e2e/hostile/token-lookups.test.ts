// GET /api/tokens against the started app on a local chain, its RPC counted at a proxy: a contract asked about again
// costs the chain nothing, whether it answered as an ERC-20 or as no token, and a person asking faster than the limit
// is refused with 429 in the /api error format while another person is not slowed (issue 55, "Also from the review").
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { startApp, type RunningApp } from "../support/app";
import { chainsSetting, startChain, type LocalChain } from "../support/chain";
import { deployer, deployErc20 } from "../support/contracts";
import { retryAfter } from "../support/limits";
import { countingProxy, type CountingProxy } from "../support/rpc-counter";
import { signedUpSession } from "../support/session";

/** Lookups a person may make a minute, as this file's operator set it. */
const LOOKUPS = 6;

describe("token lookups", { timeout: 180_000 }, () => {
  let chain: LocalChain;
  let proxy: CountingProxy;
  let app: RunningApp;
  let token: string;

  before(async () => {
    chain = await startChain();
    proxy = await countingProxy(chain.rpcUrl);
    const holder = (await deployer(chain)).account.address;
    token = await deployErc20(chain, { name: "Test Dollar", symbol: "TUSD", supply: 10n ** 24n, holder });
    app = await startApp({
      env: { CHAINS: chainsSetting({ ...chain, rpcUrl: proxy.rpcUrl }), RATE_LIMIT_TOKEN_LOOKUPS_PER_PERSON: `${LOOKUPS}/1m` },
    });
  });
  after(async () => {
    await app?.stop();
    await proxy?.stop();
    await chain?.stop();
  });

  const lookUp = (session: Awaited<ReturnType<typeof signedUpSession>>["session"], address: string) =>
    session.request(`/api/tokens?chain_id=${chain.chainId}&address=${address}`, { method: "GET" });

  it("asks the chain once per address: a token's answer and a no-token answer are kept", async () => {
    const { session } = await signedUpSession(app, "lookups@example.test");
    const nobody = privateKeyToAccount(generatePrivateKey()).address;
    for (const [address, status, answer] of [
      [token, 200, { symbol: "TUSD", decimals: 18 }],
      [nobody, 422, { error: "not_an_erc20" }],
    ] as const) {
      const asked = async () => {
        const response = await lookUp(session, address);
        assert.equal(response.status, status);
        const body = (await response.json()) as Record<string, unknown>;
        for (const [key, value] of Object.entries(answer)) assert.equal(body[key], value);
      };
      const calls = proxy.methods.length;
      await asked();
      assert.ok(proxy.methods.length > calls, "the first ask reads the chain");
      const read = proxy.methods.length;
      await asked();
      assert.deepEqual(proxy.methods.slice(read), [], "the second ask of the same address makes no RPC call");
    }
  });

  it("refuses a person's burst beyond the limit with 429 and says when to try again; another person is not slowed", async () => {
    const alice = await signedUpSession(app, "alice.lookups@example.test");
    const bob = await signedUpSession(app, "bob.lookups@example.test");
    const fresh = () => privateKeyToAccount(generatePrivateKey()).address;
    for (let lookup = 0; lookup < LOOKUPS; lookup++) {
      const answered = await lookUp(alice.session, fresh());
      assert.equal(answered.status, 422, `lookup ${lookup + 1} of ${LOOKUPS} is answered`);
      await answered.body?.cancel();
    }
    const calls = proxy.methods.length;
    const refused = await lookUp(alice.session, fresh());
    assert.equal(refused.status, 429);
    assert.deepEqual(await refused.json(), { error: "rate_limited", message: `Too many requests; try again in ${retryAfter(refused)} s` });
    assert.equal(proxy.methods.length, calls, "a refused lookup reads nothing from the chain");
    assert.equal((await lookUp(bob.session, token)).status, 200);
  });
});
