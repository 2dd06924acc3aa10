// A framework at made-up addresses, for the unit tests of what is pure (encoding, decoding, wording, signing).
import { getAddress, type Address } from "viem";
import { ENFORCERS, frameworkFrom, type Framework } from "./framework";

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
