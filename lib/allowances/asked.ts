// An allowance an agent asks for an address whose key it holds (request_allowance, in the shape of ERC-7715's
// permission request): a pending request the person approves on its page with one passkey tap over the delegations
// their browser decoded, answered to the agent as ERC-7715 answers it (the signed delegation chain, in get_request's
// `permission`). The server stores the delegations but holds no key they name: only the agent's key can redeem them
// (docs/decisions/0041-agent-held-allowances.md).
import { formatEther, formatUnits, getAddress, numberToHex, type Address } from "viem";
import { db } from "@/lib/db";
import { recordAuditIn } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { tokenMetadata } from "@/lib/wallet/token-metadata";
import { onChain } from "@/lib/wallet/chains";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { pendingRequest } from "@/lib/wallet/approvals";
import { lockLiveGrant, recordTransition, RequestError, reloadRequest, toView } from "@/lib/wallet/request-lifecycle";
import { payloadOf, type AskedAllowance } from "@/lib/wallet/request-payload";
import { PERIOD_DURATIONS, type GrantedPermission, type RequestView, type ToolInput } from "@/contract";
import { NotFoundError } from "@/lib/http/errors";
import {
  AllowanceError,
  auditAllowanceCreated,
  frameworkFor,
  storeAllowance,
  storedDelegation,
  type Allowance,
  type ReadyAllowance,
} from "./allowances";
import { AllowanceSpecError, specFromChoices, type AllowanceSpec, type Delegation, type DelegationMeaning } from "./caveats";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import { guarded, guardedOptions, withStepUp } from "@/lib/auth/step-up";
import {
  prepareAllowance,
  readySignedAllowance,
  sealingPasskeys,
  type AllowanceBinding,
  type PreparedAllowance,
  type SignedAllowance,
} from "./ceremony";
import { allowanceBinding } from "./signing";
import { encodedDelegations } from "./delegation-encoding";
import { disableInBackground, stopAllowancesIn } from "./stop";

const PERIOD_NAMES = { 3600: "hour", 86400: "day", 604800: "week" } as const satisfies Record<(typeof PERIOD_DURATIONS)[number], string>;

/**
 * What the agent asked, in the person's units and checked as an allowance is before anyone is asked: one period for
 * every asset, named payees or any payee (tokens only, each with its most per payment), a chain with the Delegation
 * Framework, tokens that answer as ERC-20s, an end between an hour and 30 days away.
 */
export async function askedAllowance(
  agent: AgentContext,
  input: ToolInput<"request_allowance">,
  now: number = Math.floor(Date.now() / 1000),
): Promise<AskedAllowance> {
  frameworkFor(input.chain_id);
  const granted = agent.credentials.find((entry) => entry.credentialId === input.credential_id);
  const to = getAddress(input.to);
  if (granted && getAddress(granted.address) === to)
    throw new AllowanceError("`to` is the wallet itself: name the address whose key the agent holds.");
  const durations = new Set(input.permissions.map((permission) => permission.data.periodDuration));
  if (durations.size !== 1) throw new AllowanceError("Every permission of one request resets on the same periodDuration.");
  const period = PERIOD_NAMES[[...durations][0] as keyof typeof PERIOD_NAMES];
  const anyPayee = input.any_payee ?? false;
  const coins = input.permissions.filter((permission) => permission.type === "native-token-periodic");
  if (coins.length > 1) throw new AllowanceError("Ask for the chain's coin in one permission.");
  const tokens = await Promise.all(
    input.permissions.flatMap((permission) =>
      permission.type === "erc20-token-periodic"
        ? [
            (async () => {
              const { tokenAddress, periodAmount, maxPerPayment } = permission.data;
              const metadata = await tokenMetadata(input.chain_id, getAddress(tokenAddress));
              if (metadata.standard !== "erc20") throw new AllowanceError(`${tokenAddress} is not an ERC-20 token on this chain.`);
              if (anyPayee !== (maxPerPayment !== undefined))
                throw new AllowanceError("With any_payee each token names its maxPerPayment, and without it none does.");
              const inTokens = (amount: string) => formatUnits(BigInt(amount), metadata.decimals);
              return {
                address: getAddress(tokenAddress),
                amount: inTokens(periodAmount),
                ...(maxPerPayment !== undefined && { perPayment: inTokens(maxPerPayment) }),
                symbol: metadata.symbol,
                decimals: metadata.decimals,
              };
            })(),
          ]
        : [],
    ),
  );
  const asked: AskedAllowance = {
    agent: to,
    chainId: input.chain_id,
    ...(coins[0] && { coin: formatEther(BigInt(coins[0].data.periodAmount)) }),
    tokens,
    recipients: (input.payees ?? []).map((payee) => getAddress(payee)),
    anyPayee,
    period,
    expiresAt: input.expiry,
    transactions: input.payments,
    justification: input.justification,
  };
  // the same checks the allowance's delegations get, on a stand-in delegator: a request the person could not sign is
  // never put to them
  specOf(asked, to, now);
  return asked;
}

function specOf(asked: AskedAllowance, delegator: Address, now: number): AllowanceSpec {
  try {
    return specFromChoices({ ...asked, delegator, delegate: asked.agent, overLimit: "refuse" }, now);
  } catch (error) {
    if (error instanceof AllowanceSpecError) throw new AllowanceError(error.message);
    throw error;
  }
}

/** The asked allowance as the person's choices, which the approval page's ceremony prepares to sign. */
function choicesOf(credentialId: string, asked: AskedAllowance) {
  return {
    credentialId,
    chainId: asked.chainId,
    coin: asked.coin,
    tokens: asked.tokens.map(({ address, amount, perPayment }) => ({ address, amount, perPayment })),
    recipients: asked.recipients,
    anyPayee: asked.anyPayee,
    period: asked.period,
    expiresInDays: 1,
    expiresAt: asked.expiresAt,
    transactions: asked.transactions,
    // the agent signs its own payments: above what is left, the chain refuses them, and nothing comes to the person
    overLimit: "refuse" as const,
  };
}

async function askedOf(userId: string, requestId: string, clock: Clock) {
  const row = await pendingRequest(userId, requestId, "request_allowance", clock);
  const payload = payloadOf(row);
  if (payload.kind !== "request_allowance") throw new NotFoundError("The request");
  return { row, asked: payload.allowance };
}

/** The delegations the person's browser decodes, states and signs for the request, to the agent's address. */
export async function prepareAskedAllowance(userId: string, requestId: string, clock: Clock = systemClock): Promise<PreparedAllowance> {
  const { row, asked } = await askedOf(userId, requestId, clock);
  return prepareAllowance(userId, choicesOf(row.credentialId, asked), asked.agent);
}

/** The passkey challenge for exactly these delegations of the request, answerable by a passkey that sealed the key. */
export async function askedAllowanceOptions(userId: string, requestId: string, binding: AllowanceBinding, clock: Clock = systemClock) {
  const { row } = await askedOf(userId, requestId, clock);
  const allow = await sealingPasskeys(userId, row.credentialId);
  return guardedOptions(userId, guarded.giveAskedAllowance(requestId, binding, allow), clock);
}

/** Gives the allowance the person signed, once the passkey approval bound to exactly it is verified. */
export function approveAskedAllowance(
  userId: string,
  requestId: string,
  { allowance, assertion }: { allowance: SignedAllowance; assertion?: AuthenticationResponseJSON },
  clock: Clock = systemClock,
): Promise<RequestView> {
  const operation = guarded.giveAskedAllowance(requestId, allowanceBinding(allowance), []);
  return withStepUp(userId, operation, assertion, () => giveAskedAllowance(userId, requestId, allowance, clock), clock);
}

/**
 * Each signed delegation must be one the request asked for, and every one asked for signed: the same asset, cap,
 * period, payees, payments and end. What the person's browser showed was decoded from these delegations; this holds
 * the server to the agent's request too, so a page that signed more than asked gives nothing.
 */
function checkAsAsked(ready: ReadyAllowance, asked: AskedAllowance) {
  const startsAt = Math.min(...ready.checked.map(({ meaning }) => meaning.startsAt));
  const spec = specOf(asked, ready.delegator, startsAt);
  type Terms = { periodSeconds: number; transactions: number; expiresAt: number };
  const key = (token: Address | null, perPeriod: bigint, payees: Address[], perPayment: bigint | null, terms: Terms) =>
    [token, perPeriod, [...payees].sort().join(","), perPayment, terms.periodSeconds, terms.transactions, terms.expiresAt].join("|");
  const wanted = [
    ...(spec.native === undefined ? [] : [key(null, spec.native, spec.recipients, null, spec)]),
    ...spec.tokens.flatMap((token) =>
      (spec.anyPayee ? [[]] : spec.recipients.map((recipient) => [recipient])).map((payees) =>
        key(token.address, token.perPeriod, payees, token.perPayment ?? null, spec),
      ),
    ),
  ].sort();
  const signed = ready.checked
    .map(({ meaning, perPaymentMax }) =>
      key(meaning.token, meaning.perPeriod, meaning.recipients, perPaymentMax === null ? null : BigInt(perPaymentMax), meaning),
    )
    .sort();
  if (signed.length !== wanted.length || signed.some((entry, index) => entry !== wanted[index]))
    throw new AllowanceError("The signed allowance is not the one the agent asked for: nothing was given. Open the request again.");
}

/**
 * The agent's answer: per delegation, ERC-7715's granted permission, whose context the agent's key redeems. Without
 * `justification` (an allowance read back from the database, which keeps the request's words only with the request),
 * its permissions carry none.
 */
function grantedPermissionOf(
  allowance: {
    chainId: number;
    delegator: string;
    delegate: string;
    checked: { delegation: Delegation; meaning: DelegationMeaning; perPaymentMax: string | null }[];
  },
  allowanceId: string,
  justification?: string,
): GrantedPermission {
  const { DelegationManager: manager } = frameworkFor(allowance.chainId);
  return {
    allowance_id: allowanceId,
    chain_id: allowance.chainId,
    from: getAddress(allowance.delegator),
    to: getAddress(allowance.delegate),
    delegation_manager: manager,
    granted: allowance.checked.map(({ delegation, meaning, perPaymentMax }) => ({
      chainId: numberToHex(allowance.chainId),
      address: getAddress(allowance.delegator),
      expiry: meaning.expiresAt,
      signer: { type: "account" as const, data: { address: getAddress(allowance.delegate) } },
      permission: {
        type: meaning.token ? "erc20-token-periodic" : "native-token-periodic",
        data: {
          ...(meaning.token && { tokenAddress: meaning.token }),
          periodAmount: numberToHex(meaning.perPeriod),
          periodDuration: meaning.periodSeconds,
          startTime: meaning.startsAt,
          ...(perPaymentMax !== null && { maxPerPayment: numberToHex(BigInt(perPaymentMax)) }),
          ...(justification !== undefined && { justification }),
        },
      },
      isAdjustmentAllowed: false,
      context: encodedDelegations([delegation]),
      // the account already runs the DeleGator (the relayer sent its EIP-7702 authorization): nothing to deploy
      accountMeta: [],
      signerMeta: { delegationManager: manager },
      payees: meaning.recipients,
      payments: meaning.transactions,
    })),
  };
}

/** An allowance the agent's own key spends, as get_allowance answers it: the granted permission, from what is stored. */
export function storedPermission(allowance: Allowance): GrantedPermission {
  const framework = frameworkFor(allowance.chainId);
  const checked = allowance.delegations.map((row) => ({ ...storedDelegation(framework, row), perPaymentMax: row.perPaymentMax }));
  return grantedPermissionOf({ ...allowance, checked }, allowance.id);
}

/**
 * Gives the allowance the person signed for the agent's request (after the passkey step-up bound to it, in the route):
 * in one transaction the request is completed with the agent's answer, the grant's mode for the wallet becomes
 * `allowance`, and the grant's live allowance of that wallet on that chain stops, as on /clients. A request decided
 * meanwhile (approved in another tab, expired, cancelled, its grant revoked) gives nothing.
 */
async function giveAskedAllowance(
  userId: string,
  requestId: string,
  signed: SignedAllowance,
  clock: Clock = systemClock,
): Promise<RequestView> {
  const { row, asked } = await askedOf(userId, requestId, clock);
  if (signed.chainId !== asked.chainId) throw new AllowanceError("The signed allowance is for another chain than the one asked.");
  const ready = await readySignedAllowance(userId, row.credentialId, signed, asked.agent);
  checkAsAsked(ready, asked);
  const { grantId, credentialId } = row;
  const granted = { grantId, credentialId, grant: { userId } };
  const now = clock();
  // the agent's own payments are read from the chain's events from here on (own-payments.ts)
  const fromBlock = await onChain(ready.chainId, (client) => client.getBlockNumber());
  const { id, replaced } = await db().$transaction(async (tx) => {
    // the grant and its client stay active until this commits: a revocation waits for it, and then stops this allowance too
    await lockLiveGrant(tx, grantId);
    const claimed = await tx.agentRequest.updateMany({
      where: { id: requestId, status: "pending", expiresAt: { gt: now } },
      data: { status: "completed", decidedAt: now, completedAt: now },
    });
    if (!claimed.count) throw new RequestError("not_pending", "This request was decided or expired meanwhile: nothing was given.", 409);
    const updated = await tx.grantCredential.updateMany({ where: granted, data: { mode: "allowance" } });
    if (!updated.count) throw new NotFoundError("The grant's wallet");
    const replaced = await stopAllowancesIn(tx, { grantId, credentialId, chainId: ready.chainId }, "a new allowance replaced it");
    await recordAuditIn(tx, replaced.events);
    const id = await storeAllowance(tx, ready, grantId);
    const permission = grantedPermissionOf(ready, id, asked.justification);
    await tx.agentRequest.update({ where: { id: requestId }, data: { result: JSON.stringify({ permission }) } });
    await tx.allowance.update({ where: { id }, data: { ownPaymentsFrom: Number(fromBlock) } });
    return { id, replaced };
  });
  await recordTransition(row, ["pending"], "approved", {}, clock);
  await recordTransition(row, ["approved"], "completed", {}, clock);
  await auditAllowanceCreated(ready, id, grantId, clock);
  disableInBackground(replaced);
  return toView(await reloadRequest(requestId));
}
