// An allowance as the person and the agent see it (/clients, get_allowance): each limit in words from the signed
// caveats, what is left this period and when it resets as the enforcers on the chain say, and every spend with its
// transaction. Read-only, but for marking the agent account's authorizations settled or expired as the chain says.
import { formatUnits, getAddress, type Address } from "viem";
import { chainById } from "@/lib/wallet/chains";
import { tokenMetadata } from "@/lib/wallet/token-metadata";
import { db } from "@/lib/db";
import { answersEip3009 } from "./agent-account-permit2";
import { UNSETTLED, unclaimed } from "./agent-account-balance";
import { delegationState, frameworkFor, storedDelegation, type DelegateKind } from "./allowances";
import { ATTENTION_WORDS, type Attention } from "./guard";
import { heldPayments, type Held } from "./holds";
import { sliceMeanings } from "./slices";
import { recordOwnPayments } from "./own-payments";
import { storedPermission } from "./asked";
import type { GrantedPermission } from "@/contract";
import { priceCurrency, priceOf } from "@/lib/prices/feeds";
import { moneyText } from "@/lib/prices/format";
import { allowanceCaps, allowanceSummary, anyPayeeWarning, describeDelegation, type AssetNames, type SummaryAsset } from "./wording";

export type AllowanceView = {
  id: string;
  chainId: number;
  credentialId: string;
  grantId: string | null;
  status: string;
  overLimit: string;
  createdAt: string;
  expiresAt: string;
  /** signed with the allowance: stopping it sends its disabling with no new signature */
  revocationStored: boolean;
  /** why it waits for the person (suspended, or a revocation not sent again), in words; null when nothing does */
  attention: string | null;
  /** false once a revocation the relayer paid for was refused on chain: the relayer relays no other */
  relayable: boolean;
  /** for the person's page (`person` asked): the consent card's one line, and its caps a period ("0.05 ETH a day") */
  summary: string | null;
  /** for any payee, what a compromised server could still pay, shown apart from the summary */
  warning: string | null;
  /** the address of the agent's own key when it spends the allowance (request_allowance); null: Agent Wallet's key */
  agentKey: string | null;
  /** with agentKey: the signed delegations that key spends it with, as request_allowance answered them (get_allowance) */
  permission: GrantedPermission | null;
  /** what the agent passed on of it to other keys (lib/allowances/slices.ts), each delegation's terms in words */
  slices: { id: string; delegate: string; words: string[] }[];
  caps: string | null;
  limits: {
    delegationHash: string;
    /** null: the chain's coin */
    token: Address | null;
    symbol: string;
    words: string;
    perPeriod: string;
    /** null once the allowance is no longer active (nothing is left to spend), or while the chain cannot be read */
    left: string | null;
    /** the chain could not be read just now: what is left is unknown, not nothing */
    unavailable: boolean;
    resetsAt: string | null;
    transfersLeft: number | null;
    /**
     * With a float (decision 0038): what of `left` is already in the agent's account, free of its payments on their
     * way (whole units); null without a float, or while the chain cannot be read
     */
    inAgentAccount: string | null;
  }[];
  spends: { id: string; recipient: string; token: string | null; amount: string; status: string; txHash: string | null; at: string }[];
};

/**
 * The float of an allowance's agent account in `token`: what it holds free of its payments on their way, and how many
 * payments it signed from the float (which the chain does not count). No account yet: nothing.
 */
async function floatOf(allowance: { id: string; chainId: number; agentAccount: { address: string } | null }, token: Address) {
  if (!allowance.agentAccount) return { free: 0n, payments: 0 };
  const address = getAddress(allowance.agentAccount.address);
  const [permit2, payments] = await Promise.all([
    answersEip3009(allowance.chainId, token).then((eip3009) => !eip3009),
    db().x402Payment.count({ where: { allowanceId: allowance.id, fromFloat: true, status: { in: [UNSETTLED, "settled"] } } }),
  ]);
  const free = await unclaimed({ allowanceId: allowance.id, chainId: allowance.chainId, token, permit2 }, address, new Date());
  return { free, payments };
}

export async function assetNames(chainId: number, token: Address | null): Promise<AssetNames> {
  if (!token) return { symbol: chainById(chainId).symbol, decimals: 18 };
  const metadata = await tokenMetadata(chainId, token);
  // A token that does not say what it is is shown in its smallest units, named by its address.
  return metadata.standard === "erc20" ? { symbol: metadata.symbol, decimals: metadata.decimals } : { symbol: token, decimals: 0 };
}

/**
 * The allowances of a person, a grant or a credential, newest first; revoked ones only when asked. For the person's
 * page (`person`), each also in the consent card's words, payees named by `nameOf` and caps valued where a feed gives
 * a price.
 */
export async function allowanceViews(
  where: { userId?: string; grantId?: string; credentialId?: string },
  options: { revoked?: boolean; person?: { nameOf: (address: string) => string } } = {},
) {
  const rows = await db().allowance.findMany({
    where: { ...where, ...(options.revoked ? {} : { status: { not: "revoked" } }) },
    include: {
      delegations: true,
      spends: { orderBy: { createdAt: "asc" } },
      agentAccount: { select: { address: true } },
      slices: { orderBy: { createdAt: "asc" } },
    },
    orderBy: { createdAt: "desc" },
  });
  // what agents sent themselves from allowances their own keys spend, read from the chain before the spends are listed;
  // a node that does not answer leaves them for the next read
  await Promise.all(
    rows
      .filter((row) => row.delegateKind === "agent")
      .map(async (row) => row.spends.push(...(await recordOwnPayments(row).catch(() => [])))),
  );
  const now = Math.floor(Date.now() / 1000);
  return Promise.all(
    rows.map(async (allowance): Promise<AllowanceView> => {
      const framework = frameworkFor(allowance.chainId);
      const live = allowance.status === "active" && allowance.expiresAt.getTime() > Date.now();
      const meanings = allowance.delegations.map((row) => ({ row, meaning: storedDelegation(framework, row).meaning }));
      const tokens = [...new Set(meanings.map(({ meaning }) => meaning.token))];
      const named = new Map(await Promise.all(tokens.map(async (token) => [token, await assetNames(allowance.chainId, token)] as const)));
      // What is left counts what the server counts before it pays: x402 payments signed and not yet settled, and
      // transfers sent and not yet mined (lib/allowances/holds.ts leftFor).
      const holds = live ? (await heldPayments(allowance.id, new Date())).totals : new Map<string, Held>();
      const inFlight = (hash: string): Held => {
        const sent = allowance.spends.filter((spend) => spend.status === "sent" && spend.delegationHash === hash);
        const signed = holds.get(hash) ?? { amount: 0n, payments: 0 };
        return {
          amount: sent.reduce((sum, spend) => sum + BigInt(spend.amount), signed.amount),
          payments: signed.payments + sent.length,
        };
      };
      const limits = await Promise.all(
        meanings.map(async ({ row, meaning }) => {
          const names = named.get(meaning.token)!;
          // A chain that cannot be read leaves what is left unknown; the rest of the page still shows.
          const chainSays = live ? await delegationState(allowance.chainId, framework, row).catch(() => undefined) : null;
          const held = inFlight(row.hash);
          // with a float, what the account holds free is still the agent's to spend, and its payments the server's count
          const float = live && row.float !== null && chainSays ? await floatOf(allowance, meaning.token!) : null;
          const state = chainSays && {
            ...chainSays,
            available: (chainSays.available > held.amount ? chainSays.available - held.amount : 0n) + (float?.free ?? 0n),
            callsLeft: Math.max(chainSays.callsLeft - held.payments - (float?.payments ?? 0), 0),
          };
          return {
            delegationHash: row.hash,
            token: meaning.token,
            symbol: names.symbol,
            words: describeDelegation(meaning, names, now, row.perPaymentMax === null ? null : BigInt(row.perPaymentMax)),
            perPeriod: formatUnits(meaning.perPeriod, names.decimals),
            left: state ? formatUnits(state.available, names.decimals) : null,
            resetsAt: state ? new Date(state.resetsAt * 1000).toISOString() : null,
            transfersLeft: state ? state.callsLeft : null,
            inAgentAccount: float ? formatUnits(float.free, names.decimals) : null,
            unavailable: state === undefined,
          };
        }),
      );
      const person = options.person;
      const summary =
        person &&
        (await Promise.all(
          tokens.map(async (token): Promise<SummaryAsset> => {
            const own = meanings.filter(({ meaning }) => meaning.token === token);
            const asset = named.get(token)!;
            const price = await priceOf(allowance.chainId, token).catch(() => null);
            return {
              meanings: own.map(({ meaning }) => meaning),
              asset,
              money: price && moneyText(own[0].meaning.perPeriod, asset.decimals, price, priceCurrency()),
              perPaymentMax: own[0].row.perPaymentMax === null ? null : BigInt(own[0].row.perPaymentMax),
              float: own[0].row.float === null ? null : BigInt(own[0].row.float),
            };
          }),
        ));
      return {
        id: allowance.id,
        chainId: allowance.chainId,
        credentialId: allowance.credentialId,
        grantId: allowance.grantId,
        status: live || allowance.status !== "active" ? allowance.status : "expired",
        overLimit: allowance.overLimit,
        createdAt: allowance.createdAt.toISOString(),
        expiresAt: allowance.expiresAt.toISOString(),
        revocationStored: allowance.revocationSignature !== null,
        attention: allowance.attention ? (ATTENTION_WORDS[allowance.attention as Attention] ?? allowance.attention) : null,
        relayable: allowance.attention !== "revocation_reverted",
        summary: summary ? allowanceSummary(summary, person.nameOf, { now: live ? now : null }) : null,
        warning: summary ? anyPayeeWarning(summary, allowance.delegateKind as DelegateKind) : null,
        agentKey: allowance.delegateKind === "agent" ? allowance.delegate : null,
        permission: allowance.delegateKind === "agent" ? storedPermission(allowance) : null,
        slices: allowance.slices.map((slice) => ({
          id: slice.id,
          delegate: slice.delegate,
          words: sliceMeanings(allowance.chainId, slice).map(({ meaning }) =>
            describeDelegation(meaning, named.get(meaning.token) ?? { symbol: "of an asset not in the allowance", decimals: 0 }, now),
          ),
        })),
        caps: summary ? allowanceCaps(summary) : null,
        limits,
        spends: allowance.spends.map((spend) => {
          const token = (spend.token as Address | null) ?? null;
          // a spend always names one of the allowance's assets
          const names = named.get(token) ?? { symbol: token ?? "", decimals: 0 };
          return {
            id: spend.id,
            recipient: spend.recipient,
            token,
            amount: `${formatUnits(BigInt(spend.amount), names.decimals)} ${names.symbol}`,
            status: spend.status,
            txHash: spend.txHash,
            at: spend.createdAt.toISOString(),
          };
        }),
      };
    }),
  );
}
