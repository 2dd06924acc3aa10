// What a stored request asks, in the person's terms, for the approval page: the calldata decoded and the token
// named as its contract answers, typed data as its declared fields, permits as the allowances they grant.
// Everything is derived from exactly the payload that gets signed; what cannot be put in words is shown raw.
import { formatUnits, getAddress, isAddress, type Address, type Hex } from "viem";
import type { Chain } from "@/lib/config";
import { fromNow } from "@/lib/clock";
import { chainById, READ_BUDGET_MS } from "./chains";
import { decodeCall, isUnlimitedAmount, type TokenCall } from "./call-decoding";
import { recognisePermit, type Permit, type PermitKind } from "./permits";
import type { PreparedTransaction, RequestPayload } from "./request-payload";
import { tokenMetadata, type TokenMetadata } from "./token-metadata";
import { declaredFields, domainFields, type FieldNode } from "./typed-data-fields";
import { signInOf, type SignIn } from "./sign-in";

/** A token on a chain, when a description knows both: its amounts can be valued (lib/prices). */
type TokenAt = { chainId: number; address: Address };

/**
 * One line of a description: a label and a text, an address, the raw integer behind a formatted amount, and that
 * amount of an ERC-20 on its chain for its value in money.
 */
export type Detail = {
  label: string;
  text?: string;
  address?: Address;
  raw?: string;
  value?: { chainId: number; token: Address; amount: string; decimals: number };
};

/**
 * What a call or a permit does: one sentence, its details, and a warning when it hands over more than an amount;
 * `unlimited` when a spender or operator may then take without limit (an unlimited allowance, an operator for all).
 */
export type Described = { action: string; details: Detail[]; warning: string | null; unlimited: boolean };

export type CallDescription =
  { kind: "none" } | { kind: "unknown"; selector: Hex; data: Hex } | ({ kind: "decoded"; data: Hex } & Described);

type Description =
  | { kind: "sign_message"; message: string; signIn: SignIn | null }
  | { kind: "sign_typed_data"; primaryType: string; domain: FieldNode[]; fields: FieldNode[]; permit: Described | null }
  | { kind: "send_transaction"; chain: Chain; transaction: PreparedTransaction; call: CallDescription };

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

async function describeTokenCall(call: TokenCall, transaction: PreparedTransaction, lookup: TokenLookup): Promise<Described> {
  const contract = call.kind === "permit2Approve" ? call.token : transaction.to;
  const token = await lookup(transaction.chainId, contract);
  return { ...describeCall(call, contract, token, transaction.to, transaction.chainId), unlimited: grantsUnlimited(call, token) };
}

async function callDescription(transaction: PreparedTransaction, lookup: TokenLookup): Promise<CallDescription> {
  const call = decodeCall(transaction.data);
  if (call.kind === "none" || call.kind === "unknown") return call;
  if (call.kind !== "multicall")
    return { kind: "decoded", data: transaction.data, ...(await describeTokenCall(call, transaction, lookup)) };
  const parts = await Promise.all(call.calls.map((inner) => describeTokenCall(inner, transaction, lookup)));
  return {
    kind: "decoded",
    data: transaction.data,
    action: `${parts.length} calls in one transaction: ${parts.map((part) => part.action).join("; ")}`,
    details: parts.flatMap((part, index) => part.details.map((detail) => ({ ...detail, label: `Call ${index + 1}: ${detail.label}` }))),
    warning: parts.flatMap((part) => part.warning ?? []).join(" ") || null,
    unlimited: parts.some((part) => part.unlimited),
  };
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
const AUTHORIZATIONS: PermitKind[] = ["TransferWithAuthorization", "ReceiveWithAuthorization"];

function permitAction(permit: Permit, amounts: string[], label: string): string {
  if (AUTHORIZATIONS.includes(permit.kind)) return `Transfer ${amounts.join(", ")}`;
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
      party(AUTHORIZATIONS.includes(permit.kind) ? "Recipient" : "Spender", permit.spender),
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
const AMOUNT_FIELDS = ["amount", "value"];

/**
 * Token amounts of typed data in the token's units, wherever a struct names its token: a `token` address beside an
 * `amount` or `value` (Permit2's details and permitted amounts, an order's legs), or, for the message itself,
 * `ownToken` (the token whose own permit it is). The raw integer stays; a token that does not answer stays raw.
 */
async function inTokenUnits(
  fields: FieldNode[],
  chainId: number | null,
  ownToken: Address | null,
  lookup: TokenLookup,
): Promise<FieldNode[]> {
  if (chainId === null || !Number.isSafeInteger(chainId)) return fields;
  const leaf = (name: string, within: FieldNode[]) => within.find((field) => field.name === name && "value" in field);
  const walk = async (within: FieldNode[], inherited: Address | null): Promise<FieldNode[]> => {
    const tokenField = leaf("token", within);
    const token = tokenField && "value" in tokenField && isAddress(tokenField.value) ? (tokenField.value as Address) : inherited;
    const metadata = token ? await lookup(chainId, token) : null;
    return Promise.all(
      within.map(async (field): Promise<FieldNode> => {
        if ("fields" in field) return { ...field, fields: await walk(field.fields, null) };
        if (metadata?.standard !== "erc20" || !AMOUNT_FIELDS.includes(field.name) || !/^uint\d*$/.test(field.type)) return field;
        return /^\d+$/.test(field.value) ? { ...field, inWords: amountText(metadata, BigInt(field.value)) } : field;
      }),
    );
  };
  return walk(fields, ownToken);
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
  const described = await describePayload(payload, lookup);
  const unavailable = [...unread].map((token) => `what token ${token} is (its symbol and decimals), so its amounts are in base units`);
  return { ...described, unavailable };
}

async function describePayload(payload: RequestPayload, lookup: TokenLookup): Promise<Description> {
  if (payload.kind === "sign_message") return { kind: "sign_message", message: payload.message, signIn: signInOf(payload.message) };
  if (payload.kind === "sign_typed_data") {
    const permit = recognisePermit(payload.typedData);
    const chainId = (payload.typedData.domain as { chainId?: unknown } | undefined)?.chainId;
    // A token's own permit or authorization moves the domain's token: its top-level value is in that token's units.
    const ownToken = permit && OWN_TOKEN.includes(permit.kind) ? permit.amounts[0]?.token : null;
    const [fields, described] = await Promise.all([
      inTokenUnits(declaredFields(payload.typedData), chainId === undefined ? null : Number(chainId), ownToken ?? null, lookup),
      permit && permitDescription(permit, lookup),
    ]);
    return {
      kind: "sign_typed_data",
      primaryType: String(payload.typedData.primaryType),
      domain: domainFields(payload.typedData),
      fields,
      permit: described,
    };
  }
  const { transaction } = payload;
  return { kind: "send_transaction", chain: chainById(transaction.chainId), transaction, call: await callDescription(transaction, lookup) };
}
