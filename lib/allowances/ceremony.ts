// Creating an allowance with one passkey approval. The server prepares what the person will sign (delegations to its
// delegate key with a random salt each, and the EIP-7702 authorization's nonce when the account still needs the
// DeleGator's code); the page decodes and states it, then signs it with the key the same tap unsealed; what comes back
// signed is checked again here (readyAllowance) before anything is stored.
import { z } from "zod";
import { getAddress, type Address, type Hex } from "viem";
import { db } from "@/lib/db";
import { tokenMetadata } from "@/lib/wallet/token-metadata";
import { priceCurrency, priceOf } from "@/lib/prices/feeds";
import { chainById, onChain } from "@/lib/wallet/chains";
import { NotFoundError } from "@/lib/http/errors";
import type { Seal } from "@/lib/wallet/seal";
import {
  AllowanceError,
  auditAllowanceCreated,
  type DelegateKind,
  authorizationNonce,
  frameworkFor,
  readyAllowance,
  storeAllowance,
  type ReadyAllowance,
} from "./allowances";
import {
  AllowanceSpecError,
  delegationFromJson,
  delegationsFor,
  delegationToJson,
  MAX_DELEGATIONS,
  MAX_EXPIRY_DAYS,
  perPaymentOf,
  specFromChoices,
  type DelegationJson,
  type PerPayment,
} from "./caveats";
import { recordAuditIn } from "@/lib/audit";
import { delegateAccount } from "./delegate-key";
import { disableInBackground, stopAllowancesIn } from "./stop";
import type { Framework } from "@/lib/wallet/delegation-framework";

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address")
  .transform((value) => getAddress(value));
const hex = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, "must be 0x-prefixed hex bytes") as z.ZodType<Hex>;
const word = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be 32 bytes in hex") as z.ZodType<Hex>;
const signature = z.string().regex(/^0x[0-9a-fA-F]{130}$/, "must be a 65-byte signature") as z.ZodType<Hex>;
const decimal = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?$/, "must be an amount such as 0.01");
const overLimit = z.enum(["ask", "refuse"]);
const baseUnits = z.string().regex(/^[1-9]\d{0,77}$/, "must be a positive whole number of base units");
/** Each any-payee token's most per payment and float, in base units: the server's limits, bound to the person's tap. */
const perPayment = z
  .array(z.object({ token: address, max: baseUnits, float: baseUnits.optional() }))
  .max(MAX_DELEGATIONS)
  .default([]);

/** What the person chose, in their own units. */
export const allowanceChoicesSchema = z.object({
  credentialId: z.string().min(1).max(100),
  chainId: z.number().int().positive(),
  /** per period, of the chain's coin; absent: none of it */
  coin: decimal.optional(),
  /**
   * `perPayment`: with `anyPayee`, the most one payment may be; `float`: with `anyPayee`, what the agent's account is
   * kept topped up to so that a payment it covers is answered without waiting for a block (decision 0038)
   */
  tokens: z
    .array(z.object({ address, amount: decimal, perPayment: decimal.optional(), float: decimal.optional() }))
    .max(MAX_DELEGATIONS)
    .default([]),
  /** empty with `anyPayee` (specFromChoices says which is missing) */
  recipients: z.array(address).max(MAX_DELEGATIONS),
  /** chosen explicitly: the tokens may go to anyone, up to the cap, each payment at most its `perPayment` */
  anyPayee: z.boolean().default(false),
  period: z.enum(["hour", "day", "week"]).default("day"),
  expiresInDays: z.number().int().min(1).max(MAX_EXPIRY_DAYS).default(7),
  /** unix seconds, in place of expiresInDays: the time an agent's request named (request_allowance) */
  expiresAt: z.number().int().positive().optional(),
  transactions: z.number().int().min(1).max(10_000),
  overLimit,
});
export type AllowanceChoicesInput = z.input<typeof allowanceChoicesSchema>;

/** What the page decodes, states and signs (JSON-safe). */
export type PreparedAllowance = {
  credentialId: string;
  chainId: number;
  /** the person's address */
  address: Address;
  framework: Framework;
  delegate: Address;
  /** server: Agent Wallet's delegate key; agent: a key the agent holds, which it asked the allowance for */
  delegateKind: DelegateKind;
  delegations: DelegationJson[];
  authorizationNonce: number | null;
  overLimit: "ask" | "refuse";
  /** for any payee, each token's most per payment: not on chain, so signed for by the tap's binding */
  perPayment: PerPayment;
  /** how each asset is named in the words, and its price (the answer in decimal) if a feed gives one; null: the coin */
  assets: { token: Address | null; symbol: string; decimals: number; price: { answer: string; decimals: number } | null }[];
  /** what prices are in (ISO 4217) */
  currency: string;
  /** the seals the page opens with the passkey's PRF output, so that the approval's one tap also unseals the key */
  seals: (Seal & { passkeyId: string })[];
};

async function sealedCredential(userId: string, credentialId: string) {
  const credential = await db().credential.findFirst({ where: { id: credentialId, userId }, include: { seals: true } });
  if (!credential) throw new NotFoundError("The wallet");
  if (credential.kind !== "evm") throw new AllowanceError("A watch-only address has no key to sign an allowance with.");
  if (!credential.seals.length) throw new AllowanceError("This wallet's key is not sealed under any of your passkeys.", 409);
  return credential;
}

/**
 * The delegations for the person's choices, periods starting at the chain's current time, to Agent Wallet's delegate
 * key or to `agentDelegate`, the address of a key the agent holds.
 */
export async function prepareAllowance(
  userId: string,
  choices: z.infer<typeof allowanceChoicesSchema>,
  agentDelegate?: Address,
): Promise<PreparedAllowance> {
  const credential = await sealedCredential(userId, choices.credentialId);
  const framework = frameworkFor(choices.chainId);
  const delegator = getAddress(credential.address);
  const [delegate, nonce, block] = await Promise.all([
    agentDelegate ?? delegateAccount().then((account) => account.address),
    authorizationNonce(choices.chainId, delegator),
    onChain(choices.chainId, (client) => client.getBlock()),
  ]);
  const tokens = await Promise.all(
    choices.tokens.map(async (token) => {
      const metadata = await tokenMetadata(choices.chainId, token.address);
      if (metadata.standard !== "erc20") throw new AllowanceError(`${token.address} is not an ERC-20 token on this chain.`);
      return { ...token, symbol: metadata.symbol, decimals: metadata.decimals };
    }),
  );
  const now = Number(block.timestamp);
  let delegations, limits;
  try {
    const spec = specFromChoices({ ...choices, delegator, delegate, tokens }, now);
    delegations = delegationsFor(spec, framework, now);
    limits = perPaymentOf(spec);
  } catch (error) {
    if (error instanceof AllowanceSpecError) throw new AllowanceError(error.message);
    throw error;
  }
  return {
    credentialId: credential.id,
    chainId: choices.chainId,
    address: delegator,
    framework,
    delegate,
    delegateKind: agentDelegate ? "agent" : "server",
    delegations: delegations.map(delegationToJson),
    authorizationNonce: nonce,
    overLimit: choices.overLimit,
    perPayment: limits,
    assets: await Promise.all(
      [
        ...(choices.coin === undefined ? [] : [{ token: null, symbol: chainById(choices.chainId).symbol, decimals: 18 }]),
        ...tokens.map(({ address: token, symbol, decimals }) => ({ token, symbol, decimals })),
      ].map(async (asset) => {
        // bounded: a feed that does not answer in time leaves the amount without its value
        const price = await priceOf(choices.chainId, asset.token);
        return { ...asset, price: price && { answer: price.answer.toString(), decimals: price.decimals } };
      }),
    ),
    currency: priceCurrency(),
    seals: credential.seals.map(({ passkeyId, ciphertext, iv, prfSalt }) => ({ passkeyId, ciphertext, iv, prfSalt })),
  };
}

/** The passkeys whose PRF output opens this wallet's key: the only ones that may approve creating its allowance. */
export async function sealingPasskeys(userId: string, credentialId: string): Promise<string[]> {
  return (await sealedCredential(userId, credentialId)).seals.map((seal) => seal.passkeyId);
}

const delegationJsonSchema = z.object({
  delegate: address,
  delegator: address,
  authority: word,
  caveats: z.array(z.object({ enforcer: address, terms: hex, args: hex })).max(20),
  salt: z.string().regex(/^\d{1,78}$/, "must be a decimal uint256"),
  signature,
}) satisfies z.ZodType<DelegationJson>;

/** An allowance as the person signed it: the only thing that can make a grant's mode `allowance`. */
export const signedAllowanceSchema = z.object({
  chainId: z.number().int().positive(),
  overLimit,
  delegations: z.array(delegationJsonSchema).min(1).max(MAX_DELEGATIONS),
  authorization: z
    .object({
      address,
      chainId: z.number().int().positive(),
      nonce: z.number().int().min(0),
      r: word,
      s: word,
      yParity: z.union([z.literal(0), z.literal(1)]),
    })
    .optional(),
  /** the allowance's own revocation, signed with it: what Agent Wallet sends when the allowance stops */
  revocation: signature,
  perPayment,
});
export type SignedAllowance = z.infer<typeof signedAllowanceSchema>;

/** What a passkey approval of an allowance is bound to (lib/allowances/signing.ts allowanceBinding). */
export const allowanceBindingSchema = z.object({
  chainId: z.number().int().positive(),
  overLimit,
  delegations: z.array(word).min(1).max(MAX_DELEGATIONS),
  perPayment,
});
export type AllowanceBinding = z.infer<typeof allowanceBindingSchema>;

/**
 * The signed allowance of one of the person's wallets, checked and with the DeleGator's code in place: ready to store.
 * `agentDelegate`: the address of the agent's key, which every delegation must name.
 */
export async function readySignedAllowance(
  userId: string,
  credentialId: string,
  signed: SignedAllowance,
  agentDelegate?: Address,
): Promise<ReadyAllowance> {
  const credential = await sealedCredential(userId, credentialId);
  return readyAllowance({
    userId,
    credentialId,
    chainId: signed.chainId,
    delegator: getAddress(credential.address),
    overLimit: signed.overLimit,
    delegations: signed.delegations.map(delegationFromJson),
    authorization: signed.authorization,
    revocation: signed.revocation,
    perPayment: signed.perPayment,
    agentDelegate,
  });
}

/**
 * Gives a wallet of one of the person's active grants an allowance (on /clients; after the passkey step-up bound to
 * it, in the route): the grant's mode for it becomes `allowance`, in the same transaction that stores the allowance.
 * It replaces the grant's live allowance of that wallet on that chain, which stops in that transaction and is disabled
 * on chain once it commits: one allowance at a time, so a stolen delegate key's worst case is never a sum. The grant's
 * spending policy stays and still applies first.
 */
export async function giveAllowance(userId: string, change: { grantId: string; credentialId: string; allowance: SignedAllowance }) {
  const { grantId, credentialId } = change;
  const granted = { grantId, credentialId, grant: { userId, status: "active" } };
  if (!(await db().grantCredential.count({ where: granted }))) throw new NotFoundError("The grant's wallet");
  const ready = await readySignedAllowance(userId, credentialId, change.allowance);
  const { id, replaced } = await db().$transaction(async (tx) => {
    const updated = await tx.grantCredential.updateMany({ where: granted, data: { mode: "allowance" } });
    if (!updated.count) throw new NotFoundError("The grant's wallet");
    const replaced = await stopAllowancesIn(tx, { grantId, credentialId, chainId: ready.chainId }, "a new allowance replaced it");
    await recordAuditIn(tx, replaced.events);
    return { id: await storeAllowance(tx, ready, grantId), replaced };
  });
  await auditAllowanceCreated(ready, id, grantId);
  disableInBackground(replaced);
  return { id };
}
