// What a stored request asks, in the person's terms, for the approval page: the calldata decoded and the token
// named as its contract answers, typed data as its declared fields, permits as the allowances they grant.
// Everything is derived from exactly the payload that gets signed; what cannot be put in words is shown raw.
import {
  decodeFunctionData,
  formatEther,
  formatUnits,
  getAddress,
  isAddress,
  type Address,
  type Hex,
  type TypedDataDefinition,
} from "viem";
import { EntryPoint } from "@metamask/delegation-abis";
import { ANY_BENEFICIARY } from "@metamask/delegation-core";
import { config, type Chain } from "@/lib/config";
import { fromNow, utcDateTime } from "@/lib/clock";
import { frameworkContracts, type Framework } from "@/lib/wallet/delegation-framework";
import { allowanceFramework, chainById, listedTokens, READ_BUDGET_MS } from "./chains";
import { decodeCall, isUnlimitedAmount, type TokenCall } from "./call-decoding";
import { decodeDeleGatorCall, type DeleGatorCall, type Execution } from "./deleGator-calls";
import {
  recogniseDelegation,
  readUserOperation,
  recogniseUserOperation,
  type Bound,
  type Caveat,
  type DelegationReading,
  type TokenAmount,
  type UserOperationReading,
} from "./deleGator-typed-data";
import { payeeOf, recognisePermit, type Permit, type PermitKind } from "./permits";
import type { AskedAllowance, PreparedTransaction, RequestPayload } from "./request-payload";
import { tokenMetadata, type TokenMetadata } from "./token-metadata";
import { declaredFields, domainFields, type FieldNode } from "./typed-data-fields";
import { signInOf, type SignIn } from "./sign-in";

/** A token on a chain, when a description knows both: its amounts can be valued (lib/prices). */
type TokenAt = { chainId: number; address: Address };

/**
 * One line of a description: a label and a text, an address, the raw integer behind a formatted amount, and that
 * amount of an ERC-20 (or, token null, of the chain's coin) on its chain for its value in money.
 */
export type Detail = {
  label: string;
  text?: string;
  address?: Address;
  raw?: string;
  value?: { chainId: number; token: Address | null; amount: string; decimals: number };
};

/**
 * What a call or a permit does: one sentence, its details, and a warning when it hands over more than an amount;
 * `unlimited` when a spender or operator may then take without limit (an unlimited allowance, an operator for all).
 */
export type Described = { action: string; details: Detail[]; warning: string | null; unlimited: boolean };

/** Calls the DeleGator runs from one account, in words: the wallet's own (`delegator` null) or a delegator's. */
export type RunDescription = { delegator: Address | null; delegations: number; calls: Described[] };

/**
 * What the DeleGator would run: each account's calls in words, or why they cannot be read (`unreadable`); `sends`, the
 * wei the wallet's own calls send.
 */
export type Executions = { runs: RunDescription[]; unreadable: string | null; unlimited: boolean; sends: string };

export type CallDescription =
  | { kind: "none" }
  | { kind: "unknown"; selector: Hex; data: Hex }
  | ({ kind: "decoded"; data: Hex } & Described)
  | ({ kind: "executions"; data: Hex } & Executions);

type Description =
  | { kind: "sign_message"; message: string; signIn: SignIn | null }
  | {
      kind: "sign_typed_data";
      primaryType: string;
      domain: FieldNode[];
      fields: FieldNode[];
      permit: Described | null;
      /** a Delegation: whom it lets act for the wallet, each caveat, the most it could move */
      delegation: Described | null;
      /** a user operation: the calls it runs from the wallet, and what it pays for gas */
      operation: (Executions & { details: Detail[] }) | null;
      /** an x402 payment the authorization makes (pay_x402): its amount and payee as signed, and what it pays for */
      payment?: X402Payment | null;
    }
  | { kind: "send_transaction"; chain: Chain; transaction: PreparedTransaction; call: CallDescription }
  /** an allowance the agent asks for its own key: what it asked, on `chain` (what is signed is decoded in the browser) */
  | { kind: "request_allowance"; chain: Chain; allowance: AskedAllowance };

/** An x402 payment in words: the amount in the token's units and the payee, both read from the signed authorization. */
export type X402Payment = { amount: string; payee: Address; resource: { url: string; description: string | null } };

/** `unavailable`: what the chain did not tell in time, in words; the description then says less, never guesses. */
export type RequestDescription = Description & { unavailable: string[] };

/** How a description reads what a token contract says it is. */
type TokenLookup = (chainId: number, address: Address) => Promise<TokenMetadata>;

function tokenLabel(token: TokenMetadata): string {
  switch (token.standard) {
    case "erc20":
      return token.symbol;
    case "erc721":
      return token.name && token.symbol ? `${token.name} (${token.symbol})` : (token.name ?? token.symbol ?? "an unnamed NFT collection");
    case "erc1155":
      return token.name ?? "an ERC-1155 collection";
    case "unknown":
      return "unknown token";
  }
}

/** An amount in the token's units ("12.5 USDC"); without decimals from the chain, the integer and no guess. */
export function amountText(token: TokenMetadata, amount: bigint): string {
  const unlimited = isUnlimitedAmount(amount);
  if (token.standard === "erc20") return unlimited ? `unlimited ${token.symbol}` : `${formatUnits(amount, token.decimals)} ${token.symbol}`;
  return unlimited ? "an unlimited amount of an unknown token" : `${amount} base units of an unknown token`;
}

function amountDetail(label: string, token: TokenMetadata, amount: bigint, at: TokenAt | null): Detail {
  const detail = { label, text: amountText(token, amount), raw: amount.toString() };
  if (token.standard !== "erc20" || !at || isUnlimitedAmount(amount)) return detail;
  return { ...detail, value: { chainId: at.chainId, token: at.address, amount: amount.toString(), decimals: token.decimals } };
}

function contractDetail(contract: Address, token: TokenMetadata): Detail {
  const label = token.standard === "erc721" || token.standard === "erc1155" ? "Collection" : "Token contract";
  return { label, text: tokenLabel(token), address: contract };
}

const party = (label: string, address: Address): Detail => ({ label, address });

function unlimitedWarning(spender: Address, what: string): string {
  return `Unlimited approval: ${spender} could take all your ${what}, now and later, until you revoke it. Approve only if you trust it.`;
}

/** A token call in words; `contract` is the token's (for Permit2's approve, the token it names, not Permit2). */
function describeCall(
  call: TokenCall,
  contract: Address,
  token: TokenMetadata,
  called: Address,
  chainId: number,
): Omit<Described, "unlimited"> {
  const at = { chainId, address: contract };
  const label = tokenLabel(token);
  const contractLine = contractDetail(contract, token);
  const isNft = token.standard === "erc721";
  switch (call.kind) {
    case "transfer":
      return {
        action: `Transfer ${amountText(token, call.amount)}`,
        details: [amountDetail("Amount", token, call.amount, at), party("Recipient", call.to), contractLine],
        warning: null,
      };
    case "transferAndCall":
      return {
        action: `Transfer ${amountText(token, call.amount)} and call the recipient`,
        details: [
          amountDetail("Amount", token, call.amount, at),
          party("Recipient", call.to),
          { label: "Data passed to the recipient", text: call.data },
          contractLine,
        ],
        warning: null,
      };
    case "increaseAllowance":
      return {
        action: `Allow spending of ${amountText(token, call.amount)} more`,
        details: [amountDetail("Added amount", token, call.amount, at), party("Spender", call.spender), contractLine],
        warning: isUnlimitedAmount(call.amount) ? unlimitedWarning(call.spender, label) : null,
      };
    case "permit2Approve":
      return {
        action: `Allow spending of ${amountText(token, call.amount)} through Permit2`,
        details: [
          amountDetail("Amount", token, call.amount, at),
          party("Spender", call.spender),
          contractLine,
          party("Permit2 contract", called),
          { label: "Allowance expires", text: call.expiration === 0n ? "at once (this block)" : dateText(call.expiration) },
        ],
        warning: isUnlimitedAmount(call.amount) ? unlimitedWarning(call.spender, label) : null,
      };
    case "approve":
      if (isNft) {
        return {
          action: `Allow another account to transfer ${label} #${call.amount}`,
          details: [{ label: "Token id", text: call.amount.toString() }, party("Spender", call.spender), contractLine],
          warning: null,
        };
      }
      return {
        action: `Allow spending of ${amountText(token, call.amount)}`,
        details: [amountDetail("Amount", token, call.amount, at), party("Spender", call.spender), contractLine],
        warning: isUnlimitedAmount(call.amount) ? unlimitedWarning(call.spender, label) : null,
      };
    case "transferFrom":
      if (isNft) {
        return {
          action: `Transfer ${label} #${call.amount}`,
          details: [
            { label: "Token id", text: call.amount.toString() },
            party("From", call.from),
            party("Recipient", call.to),
            contractLine,
          ],
          warning: null,
        };
      }
      return {
        action: `Transfer ${amountText(token, call.amount)}`,
        details: [amountDetail("Amount", token, call.amount, at), party("From", call.from), party("Recipient", call.to), contractLine],
        warning: null,
      };
    case "safeTransferFrom":
      return {
        action: `Transfer ${label} #${call.tokenId}`,
        details: [
          { label: "Token id", text: call.tokenId.toString() },
          party("From", call.from),
          party("Recipient", call.to),
          contractLine,
        ],
        warning: null,
      };
    case "safeTransferFrom1155":
      return {
        action: `Transfer ${call.amount} of ${label} #${call.id}`,
        details: [
          { label: "Token id", text: call.id.toString() },
          { label: "Amount", text: call.amount.toString() },
          party("From", call.from),
          party("Recipient", call.to),
          contractLine,
        ],
        warning: null,
      };
    case "safeBatchTransferFrom":
      return {
        action: `Transfer ${call.ids.length} kinds of ${label}`,
        details: [
          ...call.ids.map((id, index) => ({ label: `Token #${id}`, text: `amount ${call.amounts[index] ?? 0n}` })),
          party("From", call.from),
          party("Recipient", call.to),
          contractLine,
        ],
        warning: null,
      };
    case "setApprovalForAll":
      return call.approved
        ? {
            action: `Give an operator control of all your ${label}`,
            details: [party("Operator", call.operator), contractLine],
            warning:
              `Full access: ${call.operator} could move every token you hold in ${label}, now and later, ` +
              "until you revoke it. Approve only if you trust it.",
          }
        : {
            action: `Revoke an operator's access to your ${label}`,
            details: [party("Operator", call.operator), contractLine],
            warning: null,
          };
  }
}

/** True when the call lets its spender or operator take without limit (an NFT's approve names a token id, not an amount). */
function grantsUnlimited(call: TokenCall, token: TokenMetadata): boolean {
  if (call.kind === "setApprovalForAll") return call.approved;
  if (call.kind === "approve") return token.standard !== "erc721" && isUnlimitedAmount(call.amount);
  return (call.kind === "increaseAllowance" || call.kind === "permit2Approve") && isUnlimitedAmount(call.amount);
}

/** Where a call goes: the contract `to` on a chain, which names the coin it sends. */
type Place = { to: Address; chainId: number; symbol: string };

async function describeTokenCall(call: TokenCall, { to, chainId }: Place, lookup: TokenLookup): Promise<Described> {
  const contract = call.kind === "permit2Approve" ? call.token : to;
  const token = await lookup(chainId, contract);
  return { ...describeCall(call, contract, token, to, chainId), unlimited: grantsUnlimited(call, token) };
}

/** Calldata to `to` in words: a plain transfer (none), a call it cannot read (unknown), or token calls. */
async function dataDescription(data: Hex, place: Place, lookup: TokenLookup) {
  const call = decodeCall(data);
  if (call.kind === "none" || call.kind === "unknown") return call;
  if (call.kind !== "multicall") return { kind: "decoded" as const, data, ...(await describeTokenCall(call, place, lookup)) };
  const parts = await Promise.all(call.calls.map((inner) => describeTokenCall(inner, place, lookup)));
  return {
    kind: "decoded" as const,
    data,
    action: `${parts.length} calls in one transaction: ${parts.map((part) => part.action).join("; ")}`,
    details: parts.flatMap((part, index) => part.details.map((detail) => ({ ...detail, label: `Call ${index + 1}: ${detail.label}` }))),
    warning: parts.flatMap((part) => part.warning ?? []).join(" ") || null,
    unlimited: parts.some((part) => part.unlimited),
  };
}

/** An amount of the chain's coin: "0.01 ETH", with the wei behind it and its value in money. */
function coinDetail(label: string, wei: bigint, { chainId, symbol }: Pick<Place, "chainId" | "symbol">): Detail {
  return {
    label,
    text: `${formatEther(wei)} ${symbol}`,
    raw: wei.toString(),
    value: { chainId, token: null, amount: wei.toString(), decimals: 18 },
  };
}

/** One call the DeleGator runs, in words as a transaction's would be: a coin transfer, token calls, or an unknown call. */
async function describeExecution(
  { target, value, callData }: Execution,
  place: Omit<Place, "to">,
  lookup: TokenLookup,
): Promise<Described> {
  const at = { ...place, to: target };
  const data = await dataDescription(callData, at, lookup);
  if (data.kind === "none") {
    return {
      action: `Send ${formatEther(value)} ${place.symbol}`,
      details: [coinDetail("Amount", value, place), party("Recipient", target)],
      warning: null,
      unlimited: false,
    };
  }
  const sent = value === 0n ? [] : [coinDetail(`${place.symbol} sent with the call`, value, place)];
  if (data.kind === "unknown") {
    return {
      action: `Call an unknown function (${data.selector}) of a contract`,
      details: [party("Contract", target), ...sent, { label: "Data", text: callData }],
      warning: "Unknown contract call: this screen cannot put this call in words. Approve only if you know what it does.",
      unlimited: false,
    };
  }
  return { ...data, details: [...data.details, ...sent] };
}

/** What a DeleGator call runs, each call in words; the wei the wallet's own calls send. */
async function executionsDescription(call: DeleGatorCall, place: Omit<Place, "to">, lookup: TokenLookup): Promise<Executions> {
  if (call.kind === "unreadable") return { runs: [], unreadable: `${call.functionName}: ${call.reason}`, unlimited: false, sends: "0" };
  const runs = await Promise.all(
    call.runs.map(async ({ delegator, delegations, executions }) => ({
      delegator,
      delegations,
      calls: await Promise.all(executions.map((execution) => describeExecution(execution, place, lookup))),
    })),
  );
  const own = call.runs.filter((run) => run.delegator === null).flatMap((run) => run.executions);
  return {
    runs,
    unreadable: null,
    unlimited: runs.some((run) => run.calls.some((described) => described.unlimited)),
    sends: own.reduce((sum, execution) => sum + execution.value, 0n).toString(),
  };
}

async function callDescription(
  transaction: PreparedTransaction,
  symbol: string,
  lookup: TokenLookup,
  framework: Framework | null,
): Promise<CallDescription> {
  const place = { to: getAddress(transaction.to), chainId: transaction.chainId, symbol };
  const deleGator = decodeDeleGatorCall(transaction.data, frameworkContracts(framework));
  if (deleGator) return { kind: "executions", data: transaction.data, ...(await executionsDescription(deleGator, place, lookup)) };
  const operations = await submittedOperations(transaction, place, lookup, framework);
  if (operations) return { kind: "decoded", data: transaction.data, ...operations };
  return dataDescription(transaction.data, place, lookup);
}

/** Seconds since the epoch as a UTC date and time and how far away it is; past what a date can hold, it never ends. */
function dateText(seconds: bigint): string {
  if (seconds > 8_640_000_000_000n) return "never";
  const at = new Date(Number(seconds) * 1000);
  return `${at
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d{3}Z$/, " UTC")} (${fromNow(at)})`;
}

const ONE_TIME: PermitKind[] = [
  "PermitTransferFrom",
  "PermitBatchTransferFrom",
  "PermitWitnessTransferFrom",
  "PermitBatchWitnessTransferFrom",
];

function permitAction(permit: Permit, amounts: string[], label: string): string {
  if (payeeOf(permit)) return `Transfer ${amounts.join(", ")}`;
  if (permit.kind === "DaiPermit" && permit.amounts[0].amount === 0n) return `Revoke an allowance of ${label}`;
  return `${ONE_TIME.includes(permit.kind) ? "Allow a one-time transfer of" : "Allow spending of"} ${amounts.join(", ")}`;
}

async function permitDescription(permit: Permit, lookup: TokenLookup): Promise<Described> {
  const tokens = await Promise.all(
    permit.amounts.map(async (entry) =>
      entry.token && permit.chainId !== null ? lookup(permit.chainId, entry.token) : ({ standard: "unknown" } as const),
    ),
  );
  const amounts = permit.amounts.map((entry, index) => amountText(tokens[index], entry.amount));
  const unlimited = permit.amounts.flatMap((entry, index) => (isUnlimitedAmount(entry.amount) ? [tokenLabel(tokens[index])] : []));
  // One deadline is shown once: tokens whose allowances lapse together say it after them, and an allowance that
  // lapses when the signature does is one line.
  const { deadline, validAfter } = permit;
  const expirations = [...new Set(permit.amounts.flatMap((entry) => (entry.expiration === undefined ? [] : [entry.expiration])))];
  const shared = expirations.length === 1 ? expirations[0] : null;
  const expiresText = (expiration: bigint) => (expiration === 0n ? "when used (no standing allowance)" : dateText(expiration));
  const details = permit.amounts.flatMap((entry, index): Detail[] => [
    { label: "Token", text: tokenLabel(tokens[index]), ...(entry.token ? { address: entry.token } : {}) },
    amountDetail(
      "Amount",
      tokens[index],
      entry.amount,
      entry.token && permit.chainId !== null ? { chainId: permit.chainId, address: entry.token } : null,
    ),
    ...(entry.expiration === undefined || shared !== null ? [] : [{ label: "Allowance expires", text: expiresText(entry.expiration) }]),
  ]);
  const together = shared !== null && shared === deadline;
  return {
    action: permitAction(permit, amounts, tokenLabel(tokens[0])),
    details: [
      party(payeeOf(permit) ? "Recipient" : "Spender", payeeOf(permit) ?? permit.spender),
      // an x402 Permit2 payment: its proxy, the spender, pays the payee alone
      ...(permit.payee ? [{ label: "Paid through", text: "x402's Permit2 payment contract", address: permit.spender }] : []),
      ...details,
      ...(shared !== null && !together ? [{ label: "Allowance expires", text: expiresText(shared) }] : []),
      ...(validAfter ? [{ label: "Signature valid from", text: dateText(validAfter), raw: validAfter.toString() }] : []),
      deadline === null
        ? { label: "Signature valid until", text: "never expires" }
        : { label: together ? "Signature and allowance valid until" : "Signature valid until", text: dateText(deadline) },
    ],
    warning: unlimited.length ? unlimitedWarning(permit.spender, unlimited.join(", ")) : null,
    unlimited: unlimited.length > 0,
  };
}

const OWN_TOKEN: PermitKind[] = ["Permit", "TransferWithAuthorization", "ReceiveWithAuthorization"];
/** A field that names an amount (amount, value, amountIn, makerAmount, sellAmount, …) or a token (token, tokenIn, makerAsset, …). */
const AMOUNT_FIELD = /amount|value/i;
const TOKEN_FIELD = /token|asset|currency/i;
/** A field that names a moment (deadline, expiry, validAfter, sigDeadline, startTime, …), as seconds since the epoch. */
const MOMENT_FIELD = /deadline|expir|valid|until|before|after|time|start|end|date/i;
/** Seconds that are a date a person would read as one (2001 to 2286), not a count or a nonce. */
const MOMENT_RANGE = [1_000_000_000n, 10_000_000_000n] as const;

/** What pairs an amount with its token: the name without its kind ("amountIn" and "tokenIn" are both "in"). */
const pairKey = (name: string) => name.replace(/amount|value|token|asset|currency/gi, "").toLowerCase();

/**
 * Typed data's numbers as a person reads them, in any struct, the raw integer kept beside them: an amount beside a
 * token address in that token's units (a `token` beside an `amount`, `tokenIn` beside `amountIn`, `makerAsset` beside
 * `makerAmount`; or, for the message itself, `ownToken`, the token whose own permit it is), and a moment (a deadline,
 * an expiry) as a date. An address is read as a token when its field names one or the chain lists it; one that does not
 * answer as an ERC-20 stays raw, and an amount that could be in either of two tokens is not guessed.
 */
async function inWords(fields: FieldNode[], chainId: number | null, ownToken: Address | null, lookup: TokenLookup): Promise<FieldNode[]> {
  const chainTokens = listedTokens(chainId);
  const readable = chainId !== null && Number.isSafeInteger(chainId);
  const walk = async (within: FieldNode[], inherited: Address | null): Promise<FieldNode[]> => {
    const candidates = within.filter(
      (field): field is Extract<FieldNode, { value: string }> =>
        "value" in field &&
        field.type === "address" &&
        isAddress(field.value) &&
        (TOKEN_FIELD.test(field.name) || chainTokens.has(field.value.toLowerCase())),
    );
    const tokens = readable
      ? (
          await Promise.all(
            candidates.map(async (field) => ({ key: pairKey(field.name), metadata: await lookup(chainId, field.value as Address) })),
          )
        ).filter((token) => token.metadata.standard === "erc20")
      : [];
    const own = readable && inherited && !tokens.length ? await lookup(chainId, inherited) : null;
    // "amountIn" takes "tokenIn"'s units; a plain "token" or "amount" pairs with the struct's one token.
    const tokenOf = (name: string): TokenMetadata | null => {
      const key = pairKey(name);
      const paired = tokens.filter((token) => token.key === key);
      if (paired.length === 1) return paired[0].metadata;
      if (tokens.length === 1 && (tokens[0].key === "" || key === "")) return tokens[0].metadata;
      return own?.standard === "erc20" ? own : null;
    };
    return Promise.all(
      within.map(async (field): Promise<FieldNode> => {
        if ("fields" in field) return { ...field, fields: await walk(field.fields, null) };
        if (!/^uint\d*$/.test(field.type) || !/^\d+$/.test(field.value)) return field;
        const number = BigInt(field.value);
        const token = AMOUNT_FIELD.test(field.name) ? tokenOf(field.name) : null;
        if (token) return { ...field, inWords: amountText(token, number) };
        if (MOMENT_FIELD.test(field.name) && number >= MOMENT_RANGE[0] && number < MOMENT_RANGE[1]) {
          return { ...field, inWords: dateText(number) };
        }
        return field;
      }),
    );
  };
  return walk(fields, ownToken);
}

/** A period in words: "a day", "every 3 days". */
function periodText(seconds: number): string {
  const named: Record<number, string> = { 3600: "an hour", 86_400: "a day", 604_800: "a week" };
  if (named[seconds]) return named[seconds];
  if (seconds % 86_400 === 0) return `every ${seconds / 86_400} days`;
  return seconds % 3600 === 0 ? `every ${seconds / 3600} hours` : `every ${seconds} seconds`;
}

const dateAt = (seconds: number) => utcDateTime(new Date(seconds * 1000));

/** One caveat in words, as its enforcer enforces it: "up to 0.05 ETH a day", "only to 0x…", "until …", "at most 3 calls". */
async function caveatDetail(
  { enforcer, terms, name, read }: Caveat,
  coin: (wei: bigint) => string,
  chainId: number | null,
  lookup: TokenLookup,
): Promise<Detail> {
  const detail = (text: string, address?: Address): Detail => ({
    label: name ? `Limit (${name})` : "Limit (unknown enforcer)",
    text,
    ...(address ? { address } : {}),
  });
  if (!read) {
    return name
      ? detail(`terms this wallet cannot read, so they are not counted: ${terms}`)
      : detail(`an enforcer this wallet does not know, with terms ${terms}; whatever it checks is not counted`, enforcer);
  }
  const periods = (start: number) => `, periods counted from ${dateAt(start)}`;
  switch (read.name) {
    case "TimestampEnforcer": {
      const parts = [...(read.after ? [`not before ${dateAt(read.after)}`] : []), ...(read.before ? [`until ${dateAt(read.before)}`] : [])];
      return detail(parts.length ? parts.join(", ") : "no time limit");
    }
    case "LimitedCallsEnforcer":
      return detail(`at most ${read.limit} call${read.limit === 1 ? "" : "s"}`);
    case "AllowedTargetsEnforcer":
      return detail(`only calls to ${read.targets.join(", ")}`);
    case "AllowedCalldataEnforcer":
      return detail(`only call data with ${read.value} from byte ${read.startIndex}`);
    case "ExactCalldataEnforcer":
      return detail(read.calldata === "0x" ? "only plain transfers, no call data" : `only the call data ${read.calldata}`);
    case "ValueLteEnforcer":
      return detail(`at most ${coin(read.maxValue)} a call`);
    case "NativeTokenPeriodTransferEnforcer":
      return detail(`up to ${coin(read.amount)} ${periodText(read.seconds)}${periods(read.start)}`);
    case "ERC20PeriodTransferEnforcer": {
      const token = chainId === null ? ({ standard: "unknown" } as const) : await lookup(chainId, read.token);
      return detail(
        `only transfers of up to ${amountText(token, read.amount)} ${periodText(read.seconds)}${periods(read.start)}, of the token`,
        read.token,
      );
    }
    case "ExactExecutionEnforcer": {
      const { target, value, callData } = read.execution;
      return detail(`only this one call: ${coin(value)} to ${target}${callData === "0x" ? "" : ` with call data ${callData}`}`);
    }
  }
}

/** The chain's coin symbol, or words for it on a chain this service does not know. */
const symbolOn = (chainId: number | null) =>
  config().chains.find((chain) => chain.id === chainId)?.symbol ?? `of chain ${chainId ?? "(none)"}'s coin`;

/** A delegation in words: whom it lets act for the wallet, each caveat, the most it could move; a warning when nothing bounds it. */
async function delegationDescription(reading: DelegationReading, chainId: number | null, lookup: TokenLookup): Promise<Described> {
  const symbol = symbolOn(chainId);
  const coin = (wei: bigint) => `${formatEther(wei)} ${symbol}`;
  const who = reading.anyone ? "anyone who holds this signature" : reading.delegate;
  const moves = async (tokens: TokenAmount[]) => {
    if (!tokens.length) return "no tokens";
    const named = await Promise.all(
      tokens.map(async ({ token, amount }) =>
        amountText(chainId === null ? { standard: "unknown" } : await lookup(chainId, token), amount),
      ),
    );
    return named.join(", ");
  };
  const most = async <T>(bound: Bound<T>, words: (counted: T) => string | Promise<string>) =>
    "counted" in bound ? await words(bound.counted) : `no limit: ${bound.uncounted}`;
  const unbounded = [...("uncounted" in reading.native ? [symbol] : []), ...("uncounted" in reading.tokens ? ["tokens"] : [])];
  const caveats = await Promise.all(reading.caveats.map((caveat) => caveatDetail(caveat, coin, chainId, lookup)));
  const warning = !reading.caveats.length
    ? `No caveats: this gives ${who} full control of this wallet's funds — all its ${symbol} and tokens, now and later, until the ` +
      "delegation is disabled on the chain. Approve only if you trust it completely."
    : unbounded.length
      ? `Its caveats do not bound what ${who} may move: it could take all of this wallet's ${unbounded.join(" and ")}, until the ` +
        "delegation is disabled on the chain. Approve only if you trust it."
      : null;
  const count = reading.caveats.length;
  const limited = count
    ? `Delegate use of your wallet, limited by ${count} caveat${count === 1 ? "" : "s"}`
    : "Delegate full control of your wallet";
  return {
    action: `${limited}${reading.anyone ? " to anyone" : ""}`,
    details: [
      reading.anyone
        ? { label: "Delegate", text: `anyone who holds this signature (the open delegate ${ANY_BENEFICIARY})` }
        : party("Delegate", reading.delegate),
      party("Delegator (whose funds)", reading.delegator),
      {
        label: "Authority",
        text: reading.passesOn
          ? `passes on the delegation ${reading.passesOn}, which this wallet received`
          : "the delegator's own: a new delegation",
      },
      ...(caveats.length ? caveats : [{ label: "Limits", text: "none" }]),
      { label: `Most ${symbol} it could ever move`, text: await most(reading.native, coin) },
      { label: "Most tokens it could ever move", text: await most(reading.tokens, moves) },
    ],
    warning,
    unlimited: unbounded.length > 0,
  };
}

/** The typed data's own account in words: a permit, a delegation, or a user operation (at most one of them). */
async function typedDataWords(typedData: TypedDataDefinition, chainId: number | null, lookup: TokenLookup, framework: Framework | null) {
  const permit = recognisePermit(typedData);
  if (permit) return { permit: await permitDescription(permit, lookup), delegation: null, operation: null };
  const delegation = recogniseDelegation(typedData, framework);
  if (delegation) return { permit: null, delegation: await delegationDescription(delegation, chainId, lookup), operation: null };
  const operation = recogniseUserOperation(typedData, framework);
  if (!operation || chainId === null) return { permit: null, delegation: null, operation: null };
  const place = { chainId, symbol: symbolOn(chainId) };
  const executions = await executionsDescription(operation.call, place, lookup);
  return { permit: null, delegation: null, operation: { ...executions, details: operationDetails(operation, place, "this wallet") } };
}

/** A user operation's account, EntryPoint, gas and nonce; `payer`: who pays its gas, in words. */
function operationDetails(operation: UserOperationReading, place: Omit<Place, "to">, payer: string): Detail[] {
  return [
    party("Runs as the account", operation.sender),
    party("EntryPoint", operation.entryPoint),
    operation.paymaster
      ? party("Gas paid by a paymaster", operation.paymaster)
      : coinDetail(`Most it pays for gas, from ${payer}`, operation.gas, place),
    ...(operation.uncounted ? [{ label: "Cannot be counted", text: operation.uncounted }] : []),
    { label: "Nonce", text: operation.nonce.toString() },
  ];
}

/**
 * A transaction that hands the framework's EntryPoint signed user operations (`handleOps`): what each runs on its
 * sender's account and what it pays for gas, as its typed data read when signed; null for any other call. The
 * operations' own signatures let them run: this transaction only submits them.
 */
async function submittedOperations(
  transaction: PreparedTransaction,
  place: Omit<Place, "to">,
  lookup: TokenLookup,
  framework: Framework | null,
): Promise<Described | null> {
  if (!framework || getAddress(transaction.to) !== framework.EntryPoint) return null;
  let submitted;
  try {
    submitted = decodeFunctionData({ abi: EntryPoint, data: transaction.data });
  } catch {
    return null;
  }
  if (submitted.functionName !== "handleOps") return null;
  const [packed, beneficiary] = submitted.args as readonly [readonly Record<string, unknown>[], Address];
  const operations = packed.map((operation) => readUserOperation(operation, framework.EntryPoint, framework));
  const read = await Promise.all(operations.map((operation) => executionsDescription(operation.call, place, lookup)));
  const words = read.map((executions, index) => {
    const runs = executions.unreadable
      ? `a call that cannot be read (${executions.unreadable})`
      : executions.runs.flatMap((run) => run.calls.map((call) => call.action)).join("; ") || "nothing";
    return `${operations[index].sender} runs ${runs}`;
  });
  const count = operations.length === 1 ? "1 signed user operation" : `${operations.length} signed user operations`;
  const unreadable = read.flatMap((executions, index) =>
    executions.unreadable ? [`operation ${index + 1}: ${executions.unreadable}`] : [],
  );
  return {
    action: `Submit ${count} to the EntryPoint: ${words.join("; ")}`,
    details: [
      ...operations.flatMap((operation, index) =>
        [
          ...read[index].runs.flatMap((run) => run.calls.flatMap((call) => [{ label: "Runs", text: call.action }, ...call.details])),
          ...operationDetails(operation, place, "its account"),
        ].map((detail) => ({ ...detail, label: operations.length === 1 ? detail.label : `Operation ${index + 1}: ${detail.label}` })),
      ),
      party("Gas refund paid to", beneficiary),
    ],
    warning: unreadable.length
      ? `What these operations run cannot all be read (${unreadable.join("; ")}). Approve only if you know what they do.`
      : null,
    unlimited: read.some((executions) => executions.unlimited),
  };
}

/**
 * The approval page's account of a request's stored payload. Reads token metadata from the chain, each read waiting
 * at most `budgetMs`: a slow or dead node leaves tokens unknown, and says so, rather than holding the decision.
 */
export async function describeRequest(payload: RequestPayload, budgetMs = READ_BUDGET_MS): Promise<RequestDescription> {
  const unread = new Set<Address>();
  const lookup: TokenLookup = async (chainId, address) => {
    const metadata = await tokenMetadata(chainId, address, budgetMs);
    if (metadata.standard === "unknown" && metadata.unread) unread.add(getAddress(address));
    return metadata;
  };
  const described = await describePayload(payload, lookup, allowanceFramework);
  const unavailable = [...unread].map((token) => `what token ${token} is (its symbol and decimals), so its amounts are in base units`);
  return { ...described, unavailable };
}

/**
 * The x402 payment a transfer authorization (or a Permit2 payment through x402's proxy) makes, when the request is one
 * (pay_x402): the amount and payee come from what is signed, and only what it pays for from the resource's own words.
 */
async function x402Payment(
  payload: Extract<RequestPayload, { kind: "sign_typed_data" }>,
  permit: Permit | null,
  lookup: TokenLookup,
): Promise<X402Payment | null> {
  const payee = permit && payeeOf(permit);
  const paid = permit?.amounts[0];
  if (!payload.x402 || !permit || !payee || !paid?.token || permit.chainId === null) return null;
  const token = await lookup(permit.chainId, paid.token);
  return { amount: amountText(token, paid.amount), payee, resource: payload.x402.resource };
}

/** A request's payload in words, each token read with `lookup`, caveats by the framework `frameworkOf` names on the chain. */
export async function describePayload(
  payload: RequestPayload,
  lookup: TokenLookup,
  frameworkOf: (chainId: number) => Framework | null,
): Promise<Description> {
  if (payload.kind === "sign_message") return { kind: "sign_message", message: payload.message, signIn: signInOf(payload.message) };
  if (payload.kind === "sign_typed_data") {
    const permit = recognisePermit(payload.typedData);
    const domainChain = (payload.typedData.domain as { chainId?: unknown } | undefined)?.chainId;
    const chainId = domainChain === undefined ? null : Number(domainChain);
    // A token's own permit or authorization moves the domain's token: its top-level value is in that token's units.
    const ownToken = permit && OWN_TOKEN.includes(permit.kind) ? permit.amounts[0]?.token : null;
    const [fields, words, payment] = await Promise.all([
      inWords(declaredFields(payload.typedData), chainId, ownToken ?? null, lookup),
      typedDataWords(payload.typedData, chainId, lookup, chainId === null ? null : frameworkOf(chainId)),
      x402Payment(payload, permit, lookup),
    ]);
    return {
      kind: "sign_typed_data",
      primaryType: String(payload.typedData.primaryType),
      domain: domainFields(payload.typedData),
      fields,
      ...words,
      payment,
    };
  }
  if (payload.kind === "request_allowance")
    return { kind: "request_allowance", chain: chainById(payload.allowance.chainId), allowance: payload.allowance };
  const { transaction } = payload;
  const chain = chainById(transaction.chainId);
  return {
    kind: "send_transaction",
    chain,
    transaction,
    call: await callDescription(transaction, chain.symbol, lookup, frameworkOf(transaction.chainId)),
  };
}
