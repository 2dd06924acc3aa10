// Where the Delegation Framework lives on each chain: the published deployments (@metamask/delegation-deployments,
// version 1.3.0) for the chains they list, or the addresses the operator configures (ALLOWANCE_FRAMEWORKS, the
// local chain's). A chain with neither is offered no allowance mode. Browser-safe: no telemetry, no I/O.
import { DELEGATOR_CONTRACTS } from "@metamask/delegation-deployments";
import { getAddress, type Address } from "viem";

const FRAMEWORK_VERSION = "1.3.0";

/** The contracts an allowance uses; the shape `deploySmartAccountsEnvironment` returns, minus what we never call. */
export type Framework = {
  DelegationManager: Address;
  EntryPoint: Address;
  implementations: { EIP7702StatelessDeleGatorImpl: Address };
  caveatEnforcers: Record<EnforcerName, Address>;
  /** Those only an x402 payment's one-time leaf names (lib/x402); absent, the chain offers no x402 payments. */
  paymentEnforcers?: Record<PaymentEnforcerName, Address>;
};

/** The enforcers an allowance's caveats may name; any other enforcer is refused when decoding. */
export const ENFORCERS = [
  "AllowedTargetsEnforcer",
  "AllowedCalldataEnforcer",
  "ExactCalldataEnforcer",
  "ValueLteEnforcer",
  "NativeTokenPeriodTransferEnforcer",
  "ERC20PeriodTransferEnforcer",
  "TimestampEnforcer",
  "LimitedCallsEnforcer",
  "ExactExecutionEnforcer",
] as const;
export type EnforcerName = (typeof ENFORCERS)[number];

/**
 * Enforcers that never appear in the person's allowance, only in the delegate key's leaf of an x402 payment: kept
 * apart so an allowance naming them is still refused, and an operator's framework without them keeps its allowances.
 */
export const PAYMENT_ENFORCERS = ["RedeemerEnforcer", "ERC20TransferAmountEnforcer"] as const;
export type PaymentEnforcerName = (typeof PAYMENT_ENFORCERS)[number];

function published(chainId: number): Record<string, Address> | undefined {
  return DELEGATOR_CONTRACTS[FRAMEWORK_VERSION]?.[chainId];
}

/** The framework from a flat published record or an environment object; null when something we need is missing. */
export function frameworkFrom(source: Record<string, unknown>): Framework | null {
  const flat: Record<string, unknown> = {
    ...source,
    ...((source.implementations as Record<string, unknown> | undefined) ?? {}),
    ...((source.caveatEnforcers as Record<string, unknown> | undefined) ?? {}),
  };
  const address = (name: string): Address | null => {
    const value = flat[name];
    return typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value) ? getAddress(value) : null;
  };
  const manager = address("DelegationManager");
  const entryPoint = address("EntryPoint");
  const deleGator = address("EIP7702StatelessDeleGatorImpl");
  const enforcers = ENFORCERS.map((name) => [name, address(name)] as const);
  if (!manager || !entryPoint || !deleGator || enforcers.some(([, value]) => !value)) return null;
  const payment = PAYMENT_ENFORCERS.map((name) => [name, address(name)] as const);
  return {
    DelegationManager: manager,
    EntryPoint: entryPoint,
    implementations: { EIP7702StatelessDeleGatorImpl: deleGator },
    caveatEnforcers: Object.fromEntries(enforcers) as Record<EnforcerName, Address>,
    ...(payment.every(([, value]) => value) && {
      paymentEnforcers: Object.fromEntries(payment) as Record<PaymentEnforcerName, Address>,
    }),
  };
}

/**
 * The framework on `chainId`: the operator's configured addresses first (a local chain, or a chain the package does
 * not list yet), then the published deployment. Null: no allowance mode on that chain.
 */
export function frameworkOn(chainId: number, configured: Record<string, Record<string, unknown>> = {}): Framework | null {
  const source = configured[String(chainId)] ?? published(chainId);
  return source ? frameworkFrom(source) : null;
}

/** The enforcer's name for an address on this framework, or null: not one an allowance may use. */
export function enforcerName(framework: Framework, enforcer: string): EnforcerName | null {
  const wanted = enforcer.toLowerCase();
  return ENFORCERS.find((name) => framework.caveatEnforcers[name].toLowerCase() === wanted) ?? null;
}

/** The framework's own contracts, which no execution read as the account's may call (what they would do is not its). */
export function frameworkContracts(framework: Framework | null): Address[] {
  return framework ? [framework.DelegationManager, framework.EntryPoint] : [];
}
