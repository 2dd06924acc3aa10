// A paid HTTP resource built with the real `@x402/express` middleware and `@metamask/x402`'s erc7710 server scheme,
// settled by the erc7710 facilitator of x402-facilitator.ts: GET /report answers 402 with a PAYMENT-REQUIRED header
// until it is retried with a PAYMENT-SIGNATURE the facilitator verifies and settles.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { x402ExactEvmErc7710ServerScheme } from "@metamask/x402";
import type { Network } from "@x402/core/types";
import type { Address } from "viem";
import type { Erc7710Facilitator } from "./x402-facilitator";

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

export async function startPaidResource(options: {
  facilitator: Erc7710Facilitator;
  chainId: number;
  token: Address;
  payTo: Address;
  /** in the token's smallest unit */
  amount: bigint;
  description: string;
  maxTimeoutSeconds?: number;
}): Promise<PaidResource> {
  const network = `eip155:${options.chainId}` as Network;
  const server = new x402ResourceServer(options.facilitator).register(network, new Erc7710ServerScheme());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        "GET /report": {
          accepts: {
            scheme: "exact",
            network,
            payTo: options.payTo,
            // a custom chain has no default asset: the price names the token and its EIP-712 domain
            price: {
              amount: options.amount.toString(),
              asset: options.token,
              extra: { name: "USD Coin", version: "2", assetTransferMethod: "erc7710" },
            },
            maxTimeoutSeconds: options.maxTimeoutSeconds ?? 120,
          },
          description: options.description,
          mimeType: "application/json",
        },
      },
      server,
    ),
  );
  app.get("/report", (_request, response) => {
    response.json({ report: "paid content" });
  });
  const listening: Server = await new Promise((resolve) => {
    const started = app.listen(0, "127.0.0.1", () => resolve(started));
  });
  const { port } = listening.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/report`,
    close: () => new Promise((resolve) => listening.close(() => resolve())),
  };
}
