// Signatures in words on the approval page, at 375×812 and 1280×800: a Permit2 permit and an app's own struct show
// their token amounts in the token's units (a deployed ERC-20) and their moments as dates, the app's EIP-712 name as a claim, one deadline
// once; a Sign-In with Ethereum message says where it signs in, and warns when that is not a site of the client
// that asks. Each screen passes axe and is written to test-results/screenshots.
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { parseUnits, type Address } from "viem";
import { createSiweMessage } from "viem/siwe";
import { deployErc20 } from "../support/contracts";
import { checkScreen, overflow, VIEWPORTS } from "../support/screens";
import { signingAgent } from "../support/signing-agent";

const PERMIT2 = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
const SPENDER = "0x000000000000000000000000000000000000bEEF";
const details = (page: Page) => page.getByRole("region", { name: "Details" });
const field = (name: string, type: string) => ({ name, type });

describe("typed data and sign-ins in words", { timeout: 300_000 }, () => {
  const suite = signingAgent({ email: "words@example.com", agentName: "Wordy Agent" });
  let token: Address;

  before(async () => {
    token = await deployErc20(suite.chain, {
      name: "Test Dollar",
      symbol: "TUSD",
      supply: parseUnits("100", 18),
      holder: suite.wallet.address,
    });
  });

  /** The page of a new request, at `viewport`; the screen checked once its headline shows. */
  async function open(viewport: (typeof VIEWPORTS)[number], tool: string, args: Record<string, unknown>, headline: string, file: string) {
    const { page } = suite.person;
    await page.setViewportSize(viewport);
    await page.goto((await suite.ask(tool, args)).approval_url);
    await page.getByText(headline, { exact: true }).waitFor();
    assert.deepEqual(await checkScreen(page, `${file}-${viewport.name}`), []);
    assert.equal(await overflow(page), 0, "nothing scrolls sideways");
    return page;
  }

  for (const viewport of VIEWPORTS) {
    it(`a Permit2 permit at ${viewport.width}: the amount in TUSD, the app's name as a claim, the deadline once`, async () => {
      const deadline = Math.floor(Date.now() / 1000) + 2 * 3600;
      const page = await open(
        viewport,
        "sign_typed_data",
        {
          typed_data: {
            domain: { name: "Permit2", chainId: 31337, verifyingContract: PERMIT2 },
            types: {
              PermitDetails: [
                field("token", "address"),
                field("amount", "uint160"),
                field("expiration", "uint48"),
                field("nonce", "uint48"),
              ],
              PermitSingle: [field("details", "PermitDetails"), field("spender", "address"), field("sigDeadline", "uint256")],
            },
            primaryType: "PermitSingle",
            message: {
              details: { token, amount: String(parseUnits("10", 18)), expiration: deadline, nonce: 0 },
              spender: SPENDER,
              sigDeadline: String(deadline),
            },
          },
        },
        "Allow spending of 10 TUSD for 0x0000…bEEF — by signature, no transaction",
        "typed-data-permit2",
      );
      const shown = details(page);
      // The permit's amount and the declared field both in the token's units, with the integer that is signed.
      assert.equal(await shown.getByText(`10 TUSD (raw integer ${parseUnits("10", 18)})`).count(), 2);
      await shown.getByText("calls itself “Permit2”", { exact: false }).waitFor();
      // The allowance lapses when the signature does: one line, absolute and relative.
      const until = shown.getByRole("definition").filter({ hasText: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 2 hours\)$/ });
      assert.equal(await until.count(), 1);
      assert.equal(await shown.getByText("Signature and allowance valid until").count(), 1);
      assert.equal(await shown.getByText("Allowance expires").count(), 0);
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
    });

    it(`an app's own struct at ${viewport.width}: token amounts in words, a moment as a date; the app's name a claim`, async () => {
      const validUntil = Math.floor(Date.now() / 1000) + 3 * 86_400;
      const page = await open(
        viewport,
        "sign_typed_data",
        {
          typed_data: {
            domain: { name: "Shady Shop", version: "1", chainId: 31337 },
            types: {
              Order: [
                field("token", "address"),
                field("amount", "uint256"),
                field("memo", "string"),
                field("feeToken", "address"),
                field("feeAmount", "uint256"),
                field("validUntil", "uint64"),
              ],
            },
            primaryType: "Order",
            message: {
              token,
              amount: String(parseUnits("2.5", 18)),
              memo: "one hat",
              feeToken: token,
              feeAmount: String(parseUnits("0.125", 18)),
              validUntil,
            },
          },
        },
        "Sign Order data with Main for an app that calls itself “Shady Shop”",
        "typed-data-order",
      );
      const shown = details(page);
      await shown.getByText(`2.5 TUSD (raw integer ${parseUnits("2.5", 18)})`).waitFor();
      // A token amount beside its own token address, whatever the struct calls them, and a timestamp as a date.
      await shown.getByText(`0.125 TUSD (raw integer ${parseUnits("0.125", 18)})`).waitFor();
      const date = new Date(validUntil * 1000).toISOString().slice(0, 10);
      await shown
        .getByRole("definition")
        .filter({ hasText: new RegExp(`^${date} \\d\\d:\\d\\d:\\d\\d UTC \\(in 3 days\\) \\(raw integer ${validUntil}\\)$`) })
        .waitFor();
      await page.getByRole("button", { name: "Reject" }).click();
      await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
    });

    for (const [site, matches] of [
      ["localhost:3000", true],
      ["wallet-drainer.example", false],
    ] as const) {
      const check = matches ? "a site of the client" : "a warning on the first screen";
      it(`a sign-in to ${site} at ${viewport.width}: where it signs in, ${check}`, async () => {
        const message = createSiweMessage({
          domain: site,
          address: suite.wallet.address,
          uri: `https://${site}/login`,
          version: "1",
          chainId: 31337,
          nonce: "k3Jd9sLw2x",
          statement: "Sign in to the shop",
          issuedAt: new Date(),
          expirationTime: new Date(Date.now() + 3 * 3600 * 1000),
        });
        const page = await open(
          viewport,
          "sign_message",
          { message },
          `Sign in to ${site} with Main`,
          `sign-in-${matches ? "own" : "other"}-site`,
        );
        const warning = page.getByRole("alert").filter({ hasText: `This sign-in is for ${site}, which is not a site of “Wordy Agent”` });
        if (matches) {
          await page.getByText(`${site} is a site of “Wordy Agent”.`).waitFor();
          assert.equal(await warning.count(), 0);
        } else {
          await warning.waitFor();
          // Above the decision, on the first screen.
          const box = await warning.boundingBox();
          assert.ok(box && box.y + box.height <= viewport.height, `the warning at ${JSON.stringify(box)}`);
        }
        const shown = details(page);
        await shown
          .getByRole("definition")
          .filter({ hasText: /^Sign in to the shop$/ })
          .waitFor();
        await shown
          .getByRole("definition")
          .filter({ hasText: /UTC \(in 3 hours\)$/ })
          .waitFor();
        await page.getByRole("button", { name: "Reject" }).click();
        await page.getByRole("status").filter({ hasText: "Rejected. Nothing was signed." }).waitFor();
      });
    }
  }
});
