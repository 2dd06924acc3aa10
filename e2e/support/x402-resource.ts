// A paid HTTP resource built with the real `@x402/express` middleware and `@metamask/x402`'s erc7710 server scheme,
// settled by the erc7710 facilitator of x402-facilitator.ts (or, `transfer: "eip3009"` or `"permit2"`, with
// `@x402/evm`'s own server scheme, settled by its facilitator: x402-eip3009.ts): GET /report answers 402 with a
// PAYMENT-REQUIRED header until it is retried with a PAYMENT-SIGNATURE the facilitator verifies and settles.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { x402ExactEvmErc7710ServerScheme } from "@metamask/x402";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import type { Address } from "viem";

/**
 * `@metamask/x402` 0.2.0 predates `@x402/core` 2.27's per-method payment flows: without an `erc7710` entry the
 * middleware refuses the route ("does not support assetTransferMethod erc7710"). Verified before the handler, settled
 * after it, as eip3009 is.
 */
class Erc7710ServerScheme extends x402ExactEvmErc7710ServerScheme {
  constructor() {
    super();
    (this as { paymentFlows: object }).paymentFlows = {
      ...this.paymentFlows,
      erc7710: { supported: ["authorization", "upfront"], default: "authorization" },
    };
  }
}

export type PaidResource = { url: string; close: () => Promise<void> };

/** What a paid resource asks: how, on which chain, in which token, to whom, how much. */
export type Sale = {
  facilitator: FacilitatorClient;
  /** how the resource asks to be paid: a delegation (default), EIP-3009's default exact payload, or through Permit2 */
  transfer?: "erc7710" | "eip3009" | "permit2";
  chainId: number;
  token: Address;
  payTo: Address;
  /** in the token's smallest unit */
  amount: bigint;
  description: string;
  maxTimeoutSeconds?: number;
};

/** The `@x402/core` resource server of a sale, and the one way to pay it that it offers. */
export function saleServer(sale: Sale) {
  const network = `eip155:${sale.chainId}` as Network;
  const transfer = sale.transfer ?? "erc7710";
  return {
    server: new x402ResourceServer(sale.facilitator).register(
      network,
      transfer === "erc7710" ? new Erc7710ServerScheme() : new ExactEvmScheme(),
    ),
    accepts: {
      scheme: "exact",
      network,
      payTo: sale.payTo,
      // a custom chain has no default asset: the price names the token and its EIP-712 domain
      price: {
        amount: sale.amount.toString(),
        asset: sale.token,
        extra: { name: "USD Coin", version: "2", ...(transfer !== "eip3009" && { assetTransferMethod: transfer }) },
      },
      maxTimeoutSeconds: sale.maxTimeoutSeconds ?? 120,
    },
  };
}

/** Express on a free loopback port, and how to stop it. */
export async function listen(app: express.Express, path: string): Promise<PaidResource> {
  const listening: Server = await new Promise((resolve) => {
    const started = app.listen(0, "127.0.0.1", () => resolve(started));
  });
  const { port } = listening.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () => new Promise((resolve) => listening.close(() => resolve())),
  };
}

export async function startPaidResource(options: Sale): Promise<PaidResource> {
  const { server, accepts } = saleServer(options);
  const app = express();
  app.use(paymentMiddleware({ "GET /report": { accepts, description: options.description, mimeType: "application/json" } }, server));
  app.get("/report", (_request, response) => {
    response.json({ report: "paid content" });
  });
  return listen(app, "/report");
}

/** A paid resource started for `sale`, and the PAYMENT-REQUIRED its first, unpaid answer (a 402) carries. */
export async function startPaidResourceAsking(sale: Sale): Promise<{ resource: PaidResource; required: string }> {
  const resource = await startPaidResource(sale);
  const unpaid = await fetch(resource.url);
  assert.equal(unpaid.status, 402);
  return { resource, required: unpaid.headers.get("payment-required")! };
}
