// Paying from an allowance your key spends, with Agent Wallet's relayer paying the gas: the service prepares the
// relayer's one-time delegation of exactly your payment, this module checks it against the payment and the granted
// permission alone (never the server's word), signs it with your key, and sends it. A delegation that names another
// call, a caveat at an enforcer it cannot vouch for, or more than one use is refused before anything is signed, so a
// compromised server gets nothing from your key but the payment you asked for.
import {
  createExactExecutionTerms,
  createLimitedCallsTerms,
  decodeDelegations,
  decodeTimestampTerms,
  hashDelegation,
  type Delegation,
} from "@metamask/delegation-core";
import { DELEGATOR_CONTRACTS } from "@metamask/delegation-deployments";
import { getAddress, isAddressEqual, type Address, type Hex } from "viem";
import type { AgentWalletClient, CallOptions } from "./client";
import { countsAsGranted, endsAsGranted, type SliceSigner } from "./allowance-slice";
import { delegationTypedData } from "../contract/delegation";
import type { GrantedPermission, RequestView, ToolOutput } from "../contract";

/** The Delegation Framework's version whose published deployments vouch for the ExactExecutionEnforcer. */
export const FRAMEWORK_VERSION = "1.3.0";
/** The longest a prepared delegation may stay sendable, by default: an unsent one should die soon. */
const DEFAULT_MOST_LIFETIME_SECONDS = 900;

/** A delegation prepared for a payment that this module will not sign: what is wrong with it. Nothing was signed. */
export class AllowancePaymentError extends Error {
  override name = "AllowancePaymentError";
}

/** One payment: the chain's coin to `to` (`data` empty), or a token's transfer call (`to` the token). */
export type AllowancePayment = { to: Address; value?: bigint; data?: Hex };

export type AllowancePaymentOptions = CallOptions & {
  /** the credential the allowance is of (the one request_allowance named) */
  credentialId: string;
  /**
   * The ExactExecutionEnforcer you trust on this chain. Default: the Delegation Framework's published deployment; a
   * chain without one (a local chain) needs it given, from its operator's configuration.
   */
  exactExecutionEnforcer?: Address;
  /** The longest the relayer may hold the signed delegation before sending it; default 900 s. */
  mostLifetimeSeconds?: number;
  /** Makes a retry of this payment safe (a crash before its answer): the same key answers the first payment. */
  idempotencyKey?: string;
  wait_seconds?: number;
};

type Prepared = ToolOutput<"prepare_allowance_payment">;

/** The permission's delegation (the person's, at the end of its context) that the prepared one is under. */
function rootUnder(permission: GrantedPermission, authority: Hex) {
  for (const granted of permission.granted) {
    const chain = decodeDelegations(granted.context as Hex);
    const root = chain.at(-1);
    if (chain.length === 1 && root && hashDelegation(root).toLowerCase() === authority.toLowerCase()) return { granted, root };
  }
  throw new AllowancePaymentError("The prepared delegation is not under one of this permission's delegations");
}

type Granted = GrantedPermission["granted"][number];

/**
 * The enforcers a one-time delegation of one payment under `root` is made of: ExactExecution as given or published
 * for the chain (`trusted`), and LimitedCalls and Timestamp as the person's own delegation uses them for its number of
 * payments and its end (`count`, `end`), so that none is one the agent must take the server's word for.
 */
export function leafEnforcers(permission: GrantedPermission, granted: Granted, root: Delegation<Hex>, exactExecutionEnforcer?: Address) {
  const trusted =
    exactExecutionEnforcer ??
    (DELEGATOR_CONTRACTS[FRAMEWORK_VERSION]?.[permission.chain_id]?.ExactExecutionEnforcer as Address | undefined);
  if (!trusted)
    throw new AllowancePaymentError(
      `No published Delegation Framework on chain ${permission.chain_id}: pass exactExecutionEnforcer from its operator`,
    );
  const end = root.caveats.find((caveat) => endsAsGranted(granted, caveat));
  const count = root.caveats.find((caveat) => countsAsGranted(granted, caveat));
  if (!end || !count) throw new AllowancePaymentError("The permission's delegation has no end or number of payments as it states");
  return { trusted, count: getAddress(count.enforcer), end: getAddress(end.enforcer) };
}

/**
 * The prepared delegation, checked to allow exactly `payment`, once, from your key, for a short time, by enforcers
 * found in the person's own delegation (the payments and the end) or vouched for (ExactExecution): else refused.
 */
function checkedLeaf(
  permission: GrantedPermission,
  signer: Address,
  payment: AllowancePayment,
  prepared: Prepared,
  options: AllowancePaymentOptions,
): Omit<Delegation<Hex>, "signature"> {
  const leaf = prepared.delegation;
  if (!isAddressEqual(leaf.delegator as Address, signer)) throw new AllowancePaymentError("The prepared delegation is not from your key");
  if (!isAddressEqual(leaf.delegate as Address, prepared.relayer as Address))
    throw new AllowancePaymentError("The prepared delegation is not to the relayer the service named");
  const { granted, root } = rootUnder(permission, leaf.authority as Hex);
  const { trusted, count, end } = leafEnforcers(permission, granted, root, options.exactExecutionEnforcer);
  const execution = { target: getAddress(payment.to), value: payment.value ?? 0n, callData: payment.data ?? "0x" };
  const [exact, once, until, ...more] = leaf.caveats;
  const at = (caveat: typeof exact | undefined, enforcer: Address) =>
    caveat !== undefined && isAddressEqual(caveat.enforcer as Address, enforcer) && caveat.args === "0x";
  if (more.length || !at(exact, trusted) || !at(once, count) || !at(until, end))
    throw new AllowancePaymentError("The prepared delegation's caveats are not ExactExecution, LimitedCalls and Timestamp");
  if (exact.terms.toLowerCase() !== createExactExecutionTerms({ execution }).toLowerCase())
    throw new AllowancePaymentError("The prepared delegation allows another call than this payment");
  if (once.terms.toLowerCase() !== createLimitedCallsTerms({ limit: 1 }).toLowerCase())
    throw new AllowancePaymentError("The prepared delegation allows more than one use");
  const window = decodeTimestampTerms(until.terms as Hex);
  const most = Math.floor(Date.now() / 1000) + (options.mostLifetimeSeconds ?? DEFAULT_MOST_LIFETIME_SECONDS);
  if (window.afterThreshold !== 0 || window.beforeThreshold === 0 || window.beforeThreshold > most)
    throw new AllowancePaymentError("The prepared delegation stays sendable longer than it should");
  return {
    delegate: getAddress(leaf.delegate),
    delegator: getAddress(leaf.delegator),
    authority: leaf.authority as Hex,
    caveats: leaf.caveats.map((caveat) => ({ enforcer: getAddress(caveat.enforcer), terms: caveat.terms as Hex, args: "0x" as Hex })),
    salt: BigInt(leaf.salt),
  };
}

/**
 * Pays `payment` from `permission` (an allowance `account` spends, from request_allowance) through Agent Wallet's
 * relayer, which pays the gas within the person's budget: prepares the one-time delegation, checks it, signs it with
 * `account` and sends it. Resolves with the request, completed with its transaction hash (or submitted while it is not
 * yet mined); a payment the allowance does not cover is refused (ToolError) or, when the person chose it, asked of them.
 */
export async function payFromAllowance(
  client: AgentWalletClient,
  account: SliceSigner,
  permission: GrantedPermission,
  payment: AllowancePayment,
  options: AllowancePaymentOptions,
): Promise<RequestView> {
  const signer = getAddress(account.address);
  if (!isAddressEqual(signer, permission.to as Address))
    throw new AllowancePaymentError("Only the key the allowance names can pay from it");
  const { credentialId, idempotencyKey, wait_seconds: waitSeconds, ...call } = options;
  const prepared = await client.prepareAllowancePayment(
    {
      credential_id: credentialId,
      chain_id: permission.chain_id,
      to: getAddress(payment.to),
      value: String(payment.value ?? 0n),
      ...(payment.data && { data: payment.data }),
    },
    call,
  );
  const leaf = checkedLeaf(permission, signer, payment, prepared, options);
  const signature = await account.signTypedData(delegationTypedData(getAddress(permission.delegation_manager), permission.chain_id, leaf));
  return client.sendAllowancePayment(
    {
      credential_id: credentialId,
      chain_id: permission.chain_id,
      delegation: { ...prepared.delegation, signature },
      ...(idempotencyKey && { idempotency_key: idempotencyKey }),
      ...(waitSeconds !== undefined && { wait_seconds: waitSeconds }),
    },
    call,
  );
}
