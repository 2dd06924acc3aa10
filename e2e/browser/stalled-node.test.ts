// A chain node that hangs never holds a decision: the app reads the chain through an endpoint that stops answering
// (it holds every request open) once the request exists. The approval page still comes with its headline and a working
// Approve button, in the terms the signed bytes carry (the raw amount of a token it cannot name), and says what the
// chain did not tell — never a guessed symbol or a spender assumed to be a person.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseUnits, type Address } from "viem";
import { chainsSetting, stallingRpc, type StallingRpc } from "../support/chain";
import { deployErc20 } from "../support/contracts";
import { checkScreen, VIEWPORTS } from "../support/screens";
import { signingAgent } from "../support/signing-agent";
import { eip2612Permit } from "@/lib/wallet/permit.fixture";

const SPENDER = "0x000000000000000000000000000000000000bEEF";

describe("a chain node that stalls", { timeout: 300_000 }, () => {
  let rpc: StallingRpc;
  let token: Address;
  const suite = signingAgent({
    email: "stalled@example.com",
    agentName: "Patient Agent",
    env: async (chain) => {
      rpc = await stallingRpc(chain);
      return { CHAINS: chainsSetting({ ...chain, rpcUrl: rpc.url }) };
    },
  });

  before(async () => {
    token = await deployErc20(suite.chain, {
      name: "Stalled Token",
      symbol: "STALL",
      supply: parseUnits("100", 18),
      holder: suite.wallet.address,
    });
  });
  after(() => rpc?.close());

  it("the approval page comes at once with its headline and Approve, says what is unavailable, and guesses nothing", async () => {
    const { page } = suite.person;
    await page.setViewportSize(VIEWPORTS[0]);
    const permit = await suite.ask("sign_typed_data", {
      typed_data: eip2612Permit({
        token,
        tokenName: "Stalled Token",
        owner: suite.wallet.address,
        spender: SPENDER,
        value: parseUnits("5", 18).toString(),
        deadline: String(Math.floor(Date.now() / 1000) + 3600),
      }),
    });
    rpc.stall();

    // Each read the page waited on would take the RPC's own timeout (8 s): a few seconds is enough for a page that waits on none.
    await page.goto(permit.approval_url, { waitUntil: "domcontentloaded", timeout: 6_000 });
    assert.equal(
      await page.locator(".headline").innerText(),
      "Allow spending of 5000000000000000000 base units of an unknown token for 0x0000…bEEF — by signature, no transaction",
    );
    const unavailable = await page.getByRole("note").filter({ hasText: "Not available now" }).innerText();
    assert.match(unavailable, new RegExp(`what token ${token} is \\(its symbol and decimals\\), so its amounts are in base units`));
    assert.match(unavailable, new RegExp(`whether the spender ${SPENDER} is a contract`));
    // The symbol is known only to the chain (the domain's "Stalled Token" is the signed data's own claim).
    assert.doesNotMatch(await page.locator("main").innerText(), /\bSTALL\b/);
    assert.deepEqual(await checkScreen(page, "approval-node-stalled-phone"), []);

    await page.getByRole("button", { name: "Approve with passkey" }).click();
    await page.getByRole("status").filter({ hasText: "Approved" }).waitFor();
    const done = (await suite.agent.callTool({ name: "get_request", arguments: { request_id: permit.request_id } })) as unknown as {
      structuredContent: { status: string; signature: string };
    };
    assert.equal(done.structuredContent.status, "completed");
    assert.match(done.structuredContent.signature, /^0x[0-9a-f]{130}$/);
  });
});
