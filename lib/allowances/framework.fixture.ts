// A framework at made-up addresses, for the unit tests of what is pure (encoding, decoding, wording, signing).
import { getAddress, parseEther, type Address } from "viem";
import { DAY, delegationsFor } from "./caveats";
import { ENFORCERS, frameworkFrom, type Framework } from "@/lib/wallet/delegation-framework";

/** An address from a small number: 0x0000…00ff for 255. */
export const address = (n: number) => getAddress(`0x${n.toString(16).padStart(40, "0")}`) as Address;

export const testFramework = frameworkFrom({
  DelegationManager: address(1),
  EntryPoint: address(2),
  implementations: { EIP7702StatelessDeleGatorImpl: address(3) },
  caveatEnforcers: Object.fromEntries(ENFORCERS.map((name, index) => [name, address(100 + index)])),
}) as Framework;

/** 2026-11-25 14:05:00 UTC, in seconds. */
export const NOW = Date.UTC(2026, 10, 25, 14, 5) / 1000;

/** What the server prepares for `delegator` to sign on chain 31337: 0.01 ETH (and `tokens`) a day to one recipient. */
export function preparedAllowance(delegator: Address, options: { delegate?: Address; tokens?: Address[] } = {}) {
  const delegations = delegationsFor(
    {
      chainId: 31337,
      delegator,
      delegate: options.delegate ?? address(0xbbbb),
      native: parseEther("0.01"),
      tokens: (options.tokens ?? []).map((token) => ({ address: token, perPeriod: 10n })),
      recipients: [address(0xcccc)],
      periodSeconds: DAY,
      startsAt: NOW,
      expiresAt: NOW + 7 * DAY,
      transactions: 3,
      overLimit: "ask",
    },
    testFramework,
    NOW,
  );
  return { framework: testFramework, chainId: 31337, delegate: address(0xbbbb), delegations, authorizationNonce: 0 as number | null };
}
