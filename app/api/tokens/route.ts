// GET /api/tokens: what a contract a form names says it is (an ERC-20's symbol and decimals), read from the chain for
// the signed-in person; answers are kept per chain and address, and each person's lookups are rate-limited.
import { z } from "zod";
import { getAddress, isAddress } from "viem";
import { appRoute } from "@/lib/routes/app-route";
import { erc20Of } from "@/lib/wallet/token-metadata";

const query = z.object({
  chain_id: z.coerce.number().int().positive(),
  address: z.string().refine((value) => isAddress(value), "must be a contract address (0x and 40 hex digits)"),
});

/** A token's symbol and decimals, for the forms that take a contract's caps in its units; limited per person (chain reads). */
export const GET = appRoute(query, ({ chain_id, address }) => erc20Of(chain_id, getAddress(address)), { limit: "tokens" });
