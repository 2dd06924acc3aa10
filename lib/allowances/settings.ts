// The operator's allowance settings (docs/operations.md): which key pays gas on each chain, and what it pays for. Where
// the Delegation Framework is, is the chains' configuration (lib/wallet/chains.ts); the secret that seals the delegate
// key is lib/allowances/key-secret.ts's.
import { toHex } from "viem";
import { mnemonicToAccount, type LocalAccount } from "viem/accounts";
import { nativeAccount } from "@/lib/wallet/native-signer";
import { z } from "zod";
import { config, ConfigError } from "@/lib/config";
import { allowanceFramework } from "@/lib/wallet/chains";

// The kit phones home unless told not to (docs/decisions/0015-allowances.md). The server never loads it — it uses
// @metamask/delegation-core and -abis, which have no telemetry — but should a later change load it, it stays quiet.
process.env.DO_NOT_TRACK = "1";

/** Hardhat's well-known development mnemonic: its account 19 relays on the local chain 31337 outside production. */
export const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk";
const LOCAL_CHAIN_ID = 31337;

/**
 * The private key of hardhat's account 19 (18 for revocations): public, so only for local chains (the tests, `npm run
 * dev:chain`).
 */
export function localRelayerKey(purpose: "payments" | "revocations" = "payments"): `0x${string}` {
  const addressIndex = purpose === "payments" ? 19 : 18;
  return toHex(mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex }).getHdKey().privateKey!);
}

const jsonRecord = <T extends z.ZodType>(value: T) =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "must be a JSON object keyed by chain id" });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string().regex(/^\d+$/, "keys must be chain ids"), value));

const relayerKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, "each relayer is a 32-byte private key in hex");
const weiAmount = z
  .string()
  .regex(/^\d{1,30}$/, "each is a whole number of wei, in a string")
  .transform(BigInt);

/** Relayers of one chain: a key, or several whose nonces are chosen apart, so that payments are sent side by side. */
const relayerKeys = z
  .union([relayerKey.transform((key) => [key]), z.array(relayerKey).min(1, "list at least one key").max(64, "at most 64 keys")])
  .refine((keys) => new Set(keys.map((key) => key.toLowerCase())).size === keys.length, "each key at most once");

const schema = z.object({
  ALLOWANCE_RELAYERS: jsonRecord(relayerKeys).optional(),
  // A second key per chain that sends nothing but revocations: its nonces never wait behind a payment's.
  ALLOWANCE_REVOCATION_RELAYERS: jsonRecord(relayerKey).optional(),
  // The most a relayer pays per gas on each chain, in wei: no payment is sent while the base fee is above it, and a
  // transaction waiting in the mempool is replaced at a higher fee up to it (lib/allowances/replacement.ts).
  ALLOWANCE_MAX_FEE_PER_GAS: jsonRecord(weiAmount).optional(),
  // The coin a chain's relayer pays for one person's allowances in 24 hours, in wei, L1 data fees included.
  ALLOWANCE_FEE_BUDGET: jsonRecord(weiAmount).optional(),
  // Gas a chain's relayer pays for one person's allowances in 24 hours (lib/allowances/relay.ts).
  ALLOWANCE_GAS_BUDGET: z.coerce.number().int("must be whole gas units").min(100_000, "must be at least 100000 gas").default(4_000_000),
  // Gas a relayer pays per person in 24 hours for revoking their allowances (apart from ALLOWANCE_GAS_BUDGET): revoking
  // the largest allowance (12 delegations) uses about 900,000.
  ALLOWANCE_REVOCATION_GAS_BUDGET: z.coerce
    .number()
    .int("must be whole gas units")
    .min(100_000, "must be at least 100000 gas")
    .default(6_000_000),
  // Gas, at the fees of the day, a relayer keeps for revocations: payments stop before its balance falls below it.
  ALLOWANCE_RELAYER_RESERVE_GAS: z.coerce.number().int("must be whole gas units").min(0, "must not be negative").default(4_000_000),
  // The smallest native payment an allowance relays, in wei: a payment worth less than its gas is not relayed.
  ALLOWANCE_MINIMUM_PAYMENT_WEI: z
    .string()
    .regex(/^\d{1,30}$/, "must be a whole number of wei")
    .default("1000000000000")
    .transform(BigInt),
});

type Settings = {
  relayLimits: RelayLimits;
  relayers: Record<string, `0x${string}`[]>;
  revocationRelayers: Record<string, `0x${string}`>;
  maxFeePerGas: Record<string, bigint>;
  feeBudget: Record<string, bigint>;
};

let cached: Settings | undefined;

function settings(): Settings {
  if (cached) return cached;
  const result = schema.safeParse(process.env);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const values = result.data;
  cached = {
    relayLimits: {
      gasBudget: BigInt(values.ALLOWANCE_GAS_BUDGET),
      revocationGasBudget: BigInt(values.ALLOWANCE_REVOCATION_GAS_BUDGET),
      reserveGas: BigInt(values.ALLOWANCE_RELAYER_RESERVE_GAS),
      minimumNativePayment: values.ALLOWANCE_MINIMUM_PAYMENT_WEI,
    },
    relayers: (values.ALLOWANCE_RELAYERS ?? {}) as Record<string, `0x${string}`[]>,
    revocationRelayers: (values.ALLOWANCE_REVOCATION_RELAYERS ?? {}) as Record<string, `0x${string}`>,
    maxFeePerGas: values.ALLOWANCE_MAX_FEE_PER_GAS ?? {},
    feeBudget: values.ALLOWANCE_FEE_BUDGET ?? {},
  };
  return cached;
}

/** The configured chains with a framework and a relayer: those offering the allowance mode, as consent names them. */
export function allowanceChains(): { id: number; name: string; symbol: string }[] {
  return config()
    .chains.filter((chain) => allowanceFramework(chain.id) && relayerAccount(chain.id))
    .map(({ id, name, symbol }) => ({ id, name, symbol }));
}

/** Each relayer key's account: deriving the address from the key costs about a millisecond of CPU, on every payment. */
const accounts = new Map<string, LocalAccount>();

function accountOf(key: `0x${string}`): LocalAccount {
  let account = accounts.get(key);
  if (!account) accounts.set(key, (account = nativeAccount(key)));
  return account;
}

/**
 * The keys that pay gas on `chainId`, none when the operator configured none: for payments and authorizations (one or
 * several), or for revocations, which have a key of their own where one is configured (else the payments' first).
 */
export function relayerAccounts(chainId: number, purpose: "payments" | "revocations" = "payments"): LocalAccount[] {
  const own = purpose === "revocations" ? settings().revocationRelayers[String(chainId)] : undefined;
  const keys = own ? [own] : settings().relayers[String(chainId)]?.slice(0, purpose === "revocations" ? 1 : undefined);
  if (keys) return keys.map(accountOf);
  // Anyone holds hardhat's keys: in production (the default, as in lib/config) a chain's relayer is configured.
  const production = (process.env.NODE_ENV ?? "production") === "production";
  return chainId === LOCAL_CHAIN_ID && !production ? [accountOf(localRelayerKey(purpose))] : [];
}

/** The chain's relayer key of `address`, of payments or of revocations; null when the operator no longer has it. */
export function relayerKeyOf(chainId: number, address: string): LocalAccount | null {
  const accounts = [...relayerAccounts(chainId, "payments"), ...relayerAccounts(chainId, "revocations")];
  return accounts.find((account) => account.address.toLowerCase() === address.toLowerCase()) ?? null;
}

/** Whether `address` is a relayer of revocations on the chain: their own key, or the payments' first where they have none. */
export function sendsRevocations(chainId: number, address: string): boolean {
  return relayerAccounts(chainId, "revocations").some((account) => account.address.toLowerCase() === address.toLowerCase());
}

/** The chain's first relayer key (for payments, or the one for revocations), or null when none is configured. */
export function relayerAccount(chainId: number, purpose: "payments" | "revocations" = "payments"): LocalAccount | null {
  return relayerAccounts(chainId, purpose)[0] ?? null;
}

/** The most the operator lets a relayer pay per gas on `chainId` (ALLOWANCE_MAX_FEE_PER_GAS), or null for no set most. */
export function maxFeePerGas(chainId: number): bigint | null {
  return settings().maxFeePerGas[String(chainId)] ?? null;
}

/** The coin a relayer pays per person in 24 hours on `chainId` (ALLOWANCE_FEE_BUDGET), or null for none set. */
export function feeBudget(chainId: number): bigint | null {
  return settings().feeBudget[String(chainId)] ?? null;
}

/** What the relayers pay for, and keep back (docs/operations.md). */
export type RelayLimits = { gasBudget: bigint; revocationGasBudget: bigint; reserveGas: bigint; minimumNativePayment: bigint };

export function relayLimits(): RelayLimits {
  return settings().relayLimits;
}
