// `agent-wallet request-allowance <credential> --amount "5 USDC" --to <payees> --payments <n> --why <text>`: asks the
// person for an allowance that a key this CLI keeps spends (request_allowance), and waits for their approval. The key
// is made on first use and never leaves the config folder; the answer carries the signed delegations it redeems.
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { PERIOD_DURATIONS, type ToolInput } from "../../sdk";
import { parseAmount } from "../amount";
import { UsageError } from "../args";
import { agentKeyFile, loadAgentKey, saveAgentKey } from "../config";
import { EXIT } from "../exit-codes";
import { chainOption, CliToolError, onlyChain, sensitive, type Context } from "./shared";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const PART = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*(0x[0-9a-fA-F]{40}|[A-Za-z][A-Za-z0-9._$-]*)\s*$/;
const PERIODS = { hour: PERIOD_DURATIONS[0], day: PERIOD_DURATIONS[1], week: PERIOD_DURATIONS[2] } as const;

/** "5 USDC,0.01 eth" → [{ amount: "5", asset: "USDC" }, …]. */
function amountsOption(ctx: Context, name: string): { amount: string; asset: string }[] {
  const raw = ctx.parsed.values[name];
  if (raw === undefined) return [];
  return String(raw)
    .split(",")
    .map((part) => {
      const match = PART.exec(part);
      if (!match)
        throw new UsageError(
          `--${name} takes an amount and an asset, such as "5 USDC" or "0.01 eth" (not ${JSON.stringify(part)})`,
          ctx.command,
        );
      return { amount: match[1], asset: match[2] };
    });
}

function required(ctx: Context, name: string): string {
  const raw = ctx.parsed.values[name];
  if (typeof raw !== "string" || !raw.trim()) throw new UsageError(`--${name} is required`, ctx.command);
  return raw.trim();
}

function integer(ctx: Context, name: string, fallback?: number): number {
  const raw = ctx.parsed.values[name];
  if (raw === undefined && fallback !== undefined) return fallback;
  if (typeof raw !== "string" || !/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number`, ctx.command);
  return Number(raw);
}

/** The CLI's own key: the one in the config folder, or a new one kept there now. */
function agentKey(ctx: Context) {
  let privateKey = loadAgentKey(ctx.io.env);
  if (!privateKey) {
    privateKey = generatePrivateKey();
    saveAgentKey(privateKey, privateKeyToAccount(privateKey).address, ctx.io.env);
  }
  return privateKeyToAccount(privateKey);
}

/** A whole-unit amount in base units of `decimals`, exactly. */
function baseUnits(amount: string, decimals: number, what: string): string {
  const [whole, fraction = ""] = amount.split(".");
  if (fraction.length > decimals) throw new CliToolError(`${amount} ${what} has more decimals than its ${decimals}`);
  return (BigInt(whole || "0") * 10n ** BigInt(decimals) + BigInt((fraction + "0".repeat(decimals)).slice(0, decimals) || "0")).toString();
}

export async function run(ctx: Context): Promise<number> {
  const named = chainOption(ctx);
  const amounts = amountsOption(ctx, "amount");
  if (!amounts.length) throw new UsageError('--amount is required, such as "5 USDC" or "0.01 eth"', ctx.command);
  const per = (ctx.parsed.values.per ?? "day") as string;
  if (!(per in PERIODS)) throw new UsageError("--per is hour, day or week", ctx.command);
  const anyPayee = ctx.parsed.values["any-payee"] === true;
  const payees =
    ctx.parsed.values.to === undefined
      ? []
      : String(ctx.parsed.values.to)
          .split(",")
          .map((payee) => payee.trim());
  if (anyPayee === payees.length > 0) throw new UsageError("Name the payees with --to, or give --any-payee", ctx.command);
  const badPayee = payees.find((payee) => !ADDRESS.test(payee));
  if (badPayee !== undefined)
    throw new UsageError(`--to takes addresses separated by commas (not ${JSON.stringify(badPayee)})`, ctx.command);
  const mosts = amountsOption(ctx, "max-per-payment");
  const payments = integer(ctx, "payments");
  const days = integer(ctx, "days", 7);
  const why = required(ctx, "why");
  const account = agentKey(ctx);
  return sensitive(ctx, async (client, credentialId, listed, idempotencyKey) => {
    const chainId = named ?? (await onlyChain(ctx, client, credentialId, listed));
    const tokenAddresses = amounts.filter(({ asset }) => ADDRESS.test(asset)).map(({ asset }) => asset);
    // the chain's coin by its symbol, tokens by address or by the symbol the service lists them under
    const balance = await client.getBalance(
      { credential_id: credentialId, chain_id: chainId, ...(tokenAddresses.length && { tokens: tokenAddresses }) },
      { signal: ctx.signal },
    );
    const listedTokens = tokenAddresses.length
      ? [...balance.tokens, ...(await client.getBalance({ credential_id: credentialId, chain_id: chainId }, { signal: ctx.signal })).tokens]
      : balance.tokens;
    const tokenOf = (asset: string) => {
      const found = listedTokens.find(
        (token) => token.token.toLowerCase() === asset.toLowerCase() || token.symbol?.toLowerCase() === asset.toLowerCase(),
      );
      if (!found || found.decimals === null) throw new CliToolError(`${asset} is not a token the service can read on chain ${chainId}`);
      return { ...found, decimals: found.decimals };
    };
    const period = PERIODS[per as keyof typeof PERIODS];
    const permissions: ToolInput<"request_allowance">["permissions"] = amounts.map(({ amount, asset }) => {
      if (asset.toLowerCase() === balance.symbol.toLowerCase() || asset.toLowerCase() === "eth")
        return { type: "native-token-periodic", data: { periodAmount: parseAmount(`${amount}eth`), periodDuration: period } };
      const token = tokenOf(asset);
      const most = mosts.find((entry) => tokenOf(entry.asset).token === token.token);
      if (anyPayee && !most) throw new UsageError(`--max-per-payment is required for ${asset} with --any-payee`, ctx.command);
      return {
        type: "erc20-token-periodic",
        data: {
          tokenAddress: token.token,
          periodAmount: baseUnits(amount, token.decimals, asset),
          periodDuration: period,
          ...(most && { maxPerPayment: baseUnits(most.amount, token.decimals, asset) }),
        },
      };
    });
    return client.requestAllowance(
      {
        credential_id: credentialId,
        chain_id: chainId,
        to: account.address,
        permissions,
        ...(anyPayee ? { any_payee: true } : { payees }),
        payments,
        expiry: Math.floor(Date.now() / 1000) + days * 86_400,
        justification: why,
        idempotency_key: idempotencyKey,
      },
      { signal: ctx.signal },
    );
  }).then((code) => {
    if (code === EXIT.ok && !ctx.json)
      ctx.io.stderr.write(`Spent only by this CLI's key ${account.address}, kept in\n${agentKeyFile(ctx.io.env)}\n`);
    return code;
  });
}
