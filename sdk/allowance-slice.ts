// Passing a narrower slice of an allowance your key spends on to another key (a sub-agent's): built and signed here,
// with your key, from the granted permission alone, so the server never chooses whom it goes to or what it allows.
// Each slice is a delegation from your key under one of the allowance's, with the same caveats narrower: the chain
// enforces both on every redemption, and revoking the allowance stops the slices with it.
import {
  createAllowedTargetsTerms,
  createERC20TokenPeriodTransferTerms,
  createLimitedCallsTerms,
  createNativeTokenPeriodTransferTerms,
  createTimestampTerms,
  decodeAllowedTargetsTerms,
  decodeDelegations,
  decodeERC20TokenPeriodTransferTerms,
  decodeLimitedCallsTerms,
  decodeNativeTokenPeriodTransferTerms,
  decodeTimestampTerms,
  encodeDelegations,
  hashDelegation,
  type Delegation,
} from "@metamask/delegation-core";
import { bytesToHex, getAddress, numberToHex, type Address, type Hex } from "viem";
import type { AgentWalletClient, CallOptions } from "./client";
import { delegationTypedData } from "../contract/delegation";
import type { GrantedPermission } from "../contract";

/** What the sub-agent may do, within the allowance: left out, a term stays as the allowance has it. */
export type AllowanceSlice = {
  /** the sub-agent's key */
  to: Address;
  /** per asset (token null: the chain's coin), the most per period, in base units: no more than the allowance's */
  limits?: { token: Address | null; periodAmount: bigint }[];
  /** only these of the allowance's payees (an any-payee delegation is passed on as any payee) */
  payees?: Address[];
  /** payments in all, no more than each delegation's */
  payments?: number;
  /** unix seconds, no later than the allowance's */
  expiry?: number;
};

/** What signs a slice: any viem account (a LocalAccount, or a wallet's account that signs EIP-712). */
export type SliceSigner = {
  address: Address;
  signTypedData: (typedData: ReturnType<typeof delegationTypedData>) => Promise<Hex>;
};

type Granted = GrantedPermission["granted"][number];

/** A slice the allowance cannot give: a term above its own, or a delegation whose caveats are not an allowance's. */
export class SliceError extends Error {
  override name = "SliceError";
}

const bytes = (terms: Hex) => (terms.length - 2) / 2;

type Caveat = Delegation<Hex>["caveats"][number];

/** Whether the caveat is the delegation's end as the granted permission states it (a TimestampEnforcer's terms). */
export function endsAsGranted(granted: Pick<Granted, "expiry">, caveat: Caveat): boolean {
  return bytes(caveat.terms) === 32 && decodeTimestampTerms(caveat.terms).beforeThreshold === granted.expiry;
}

/** Whether the caveat is the delegation's number of payments as the granted permission states it (LimitedCalls). */
export function countsAsGranted(granted: Pick<Granted, "payments">, caveat: Caveat): boolean {
  return bytes(caveat.terms) === 32 && decodeLimitedCallsTerms(caveat.terms).limit === granted.payments;
}

/**
 * The delegation's caveats with the slice's terms in place of the allowance's: each caveat found by what the granted
 * permission says it holds (the period's asset, amount and duration, the end, the payments, the coin's payees), so
 * nothing the server says about the enforcers is trusted. One not found is refused.
 */
function narrowedCaveats(granted: Granted, parent: Delegation<Hex>, slice: AllowanceSlice) {
  const data = granted.permission.data as { tokenAddress?: string; periodAmount: string; periodDuration: number };
  const token = data.tokenAddress ? getAddress(data.tokenAddress) : null;
  const parentAmount = BigInt(data.periodAmount);
  const periodAmount =
    slice.limits?.find((limit) => (limit.token ? getAddress(limit.token) : null) === token)?.periodAmount ?? parentAmount;
  if (periodAmount > parentAmount || periodAmount <= 0n)
    throw new SliceError(
      `A slice may move between 1 and ${parentAmount} base units a period of ${token ?? "the coin"}, as the allowance does`,
    );
  const payments = slice.payments ?? granted.payments;
  if (!Number.isInteger(payments) || payments < 1 || payments > granted.payments)
    throw new SliceError(`A slice may allow between 1 and ${granted.payments} payments, as the allowance does`);
  const expiry = slice.expiry ?? granted.expiry;
  if (expiry > granted.expiry) throw new SliceError("A slice may not end later than the allowance");
  const found = new Set<string>();
  const caveats = parent.caveats.map((caveat) => {
    const replaced = (role: string, terms: Hex) => {
      found.add(role);
      return { enforcer: caveat.enforcer, terms, args: "0x" as Hex };
    };
    if (token && bytes(caveat.terms) === 116) {
      const period = decodeERC20TokenPeriodTransferTerms(caveat.terms);
      if (
        getAddress(period.tokenAddress) === token &&
        period.periodAmount === parentAmount &&
        period.periodDuration === data.periodDuration
      )
        return replaced("period", createERC20TokenPeriodTransferTerms({ ...period, periodAmount }));
    }
    if (!token && bytes(caveat.terms) === 96) {
      const period = decodeNativeTokenPeriodTransferTerms(caveat.terms);
      if (period.periodAmount === parentAmount && period.periodDuration === data.periodDuration)
        return replaced("period", createNativeTokenPeriodTransferTerms({ ...period, periodAmount }));
    }
    if (!found.has("end") && endsAsGranted(granted, caveat))
      return replaced("end", createTimestampTerms({ ...decodeTimestampTerms(caveat.terms), beforeThreshold: expiry }));
    if (countsAsGranted(granted, caveat)) return replaced("payments", createLimitedCallsTerms({ limit: payments }));
    if (!token && slice.payees && bytes(caveat.terms) > 0 && bytes(caveat.terms) % 20 === 0) {
      const targets = decodeAllowedTargetsTerms(caveat.terms).targets.map((target) => getAddress(target));
      if (targets.length === granted.payees.length && targets.every((target, index) => target === getAddress(granted.payees[index]))) {
        const kept = targets.filter((target) => slice.payees!.some((payee) => getAddress(payee) === target));
        return replaced("payees", createAllowedTargetsTerms({ targets: kept }));
      }
    }
    return { enforcer: caveat.enforcer, terms: caveat.terms, args: "0x" as Hex };
  });
  for (const role of ["period", "end", "payments"])
    if (!found.has(role)) throw new SliceError(`The allowance's delegation has no caveat for its ${role} as the permission states it`);
  return caveats;
}

/** Whether the slice passes this delegation on: its payees, or any payee, among those the slice keeps. */
function passedOn(granted: Granted, slice: AllowanceSlice): boolean {
  if (!slice.payees || !granted.payees.length) return true;
  return granted.payees.some((payee) => slice.payees!.some((kept) => getAddress(kept) === getAddress(payee)));
}

const randomSalt = () => BigInt(bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(32))));

/**
 * Signs `slice` of `permission` (an allowance `account` spends, from request_allowance) with `account`, and tells the
 * service of it (register_allowance_slice), so that the person sees it under the allowance on Clients. Resolves with
 * the sub-agent's permission: hand it to the sub-agent, whose key spends it with ownRedemption, as yours spends the
 * allowance. The chain refuses the sub-agent above its slice.
 */
export async function sliceAllowance(
  client: AgentWalletClient,
  account: SliceSigner,
  permission: GrantedPermission,
  slice: AllowanceSlice,
  options?: CallOptions,
): Promise<GrantedPermission & { slice_id: string }> {
  if (getAddress(account.address) !== getAddress(permission.to)) throw new SliceError("Only the key the allowance names can pass it on");
  const to = getAddress(slice.to);
  const manager = getAddress(permission.delegation_manager);
  const granted = await Promise.all(
    permission.granted
      .filter((entry) => passedOn(entry, slice))
      .map(async (entry): Promise<Granted> => {
        const [parent, ...rest] = decodeDelegations(entry.context as Hex);
        if (!parent || rest.length) throw new SliceError("A granted permission's context is the person's one delegation");
        const caveats = narrowedCaveats(entry, parent, slice);
        const unsigned = {
          delegate: to,
          delegator: getAddress(permission.to),
          authority: hashDelegation(parent),
          caveats,
          salt: randomSalt(),
        };
        const signature = await account.signTypedData(delegationTypedData(manager, permission.chain_id, unsigned));
        const child: Delegation<Hex> = { ...unsigned, signature };
        const data = entry.permission.data as Record<string, unknown>;
        const limit = slice.limits?.find((each) => (each.token ? getAddress(each.token) : null) === (data.tokenAddress ?? null));
        return {
          ...entry,
          expiry: Math.min(slice.expiry ?? entry.expiry, entry.expiry),
          signer: { type: "account", data: { address: to } },
          permission: { ...entry.permission, data: { ...data, ...(limit && { periodAmount: numberToHex(limit.periodAmount) }) } },
          context: encodeDelegations([child, parent]),
          payees: entry.payees.filter((payee) => !slice.payees || slice.payees.some((kept) => getAddress(kept) === getAddress(payee))),
          payments: slice.payments ?? entry.payments,
        };
      }),
  );
  if (!granted.length) throw new SliceError("The slice keeps none of the allowance's payees");
  const registered = await client.registerAllowanceSlice(
    { allowance_id: permission.allowance_id, to, contexts: granted.map((entry) => entry.context) },
    options,
  );
  return { ...permission, to, granted, slice_id: registered.slice_id };
}
