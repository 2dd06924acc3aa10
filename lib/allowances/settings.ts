// The operator's allowance settings (docs/operations.md): where the Delegation Framework is on chains the published
// deployments do not list, which key pays gas on each chain, and the secret that seals the delegate key.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { mnemonicToAccount, privateKeyToAccount, type LocalAccount } from "viem/accounts";
import { config, ConfigError } from "@/lib/config";
import { loadOrCreateJson } from "@/lib/config/secrets";
import { frameworkOn, type Framework } from "./framework";

// The kit phones home unless told not to (docs/decisions/0015-allowances.md). The server never loads it — it uses
// @metamask/delegation-core and -abis, which have no telemetry — but should a later change load it, it stays quiet.
process.env.DO_NOT_TRACK = "1";

/** Hardhat's well-known development mnemonic: on the local chain 31337 its account 19 relays out of the box. */
const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk";
const LOCAL_CHAIN_ID = 31337;

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

const schema = z.object({
  ALLOWANCE_FRAMEWORKS: jsonRecord(z.record(z.string(), z.unknown())).optional(),
  ALLOWANCE_RELAYERS: jsonRecord(z.string().regex(/^0x[0-9a-fA-F]{64}$/, "each relayer is a 32-byte private key in hex")).optional(),
  ALLOWANCE_KEY_SECRET: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43,}$/, "must be base64url of at least 32 bytes")
    .optional(),
});

type Settings = {
  frameworks: Record<string, Record<string, unknown>>;
  relayers: Record<string, `0x${string}`>;
  keySecret: string;
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
    frameworks: values.ALLOWANCE_FRAMEWORKS ?? {},
    relayers: (values.ALLOWANCE_RELAYERS ?? {}) as Record<string, `0x${string}`>,
    // Like the other secrets: generated once into the data folder; several instances set it in the environment.
    keySecret:
      values.ALLOWANCE_KEY_SECRET ??
      loadOrCreateJson(config().dataDir, "allowance-key-secret.json", () => ({ secret: randomBytes(32).toString("base64url") })).secret,
  };
  return cached;
}

/** The framework on a configured chain, or null: that chain offers no allowance mode. */
export function allowanceFramework(chainId: number): Framework | null {
  if (!config().chains.some((chain) => chain.id === chainId)) return null;
  return frameworkOn(chainId, settings().frameworks);
}

/** The configured chains that offer the allowance mode, as the consent screen names them. */
export function allowanceChains(): { id: number; name: string; symbol: string }[] {
  return config()
    .chains.filter((chain) => allowanceFramework(chain.id))
    .map(({ id, name, symbol }) => ({ id, name, symbol }));
}

/** The key that pays gas for spends and revocations on `chainId`, or null when the operator configured none. */
export function relayerAccount(chainId: number): LocalAccount | null {
  const key = settings().relayers[String(chainId)];
  if (key) return privateKeyToAccount(key);
  return chainId === LOCAL_CHAIN_ID ? mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex: 19 }) : null;
}

/** The secret that seals the delegate key at rest. */
export function delegateKeySecret(): string {
  return settings().keySecret;
}
