// The public contract: what an agent sees of Agent Wallet beyond the OAuth
// documents. The MCP server registers these tool schemas, the wallet's request
// lifecycle uses these statuses, and the SDK and CLI type themselves from this
// module alone: one definition for all of them (docs/architecture.md).
import { z } from "zod";

export { API_KEY_PREFIX } from "./api-key";

/**
 * Per credential in a grant: `read` (no signatures), `approve` (signatures, each approved with a passkey) or
 * `allowance` (payments within an on-chain allowance the person signed go without a tap; the rest as `approve`).
 */
export const APPROVAL_MODES = ["read", "approve", "allowance"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

export const CREDENTIAL_KINDS = ["evm", "evm_watch"] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export const REQUEST_KINDS = ["sign_message", "sign_typed_data", "send_transaction", "request_allowance"] as const;
export const REQUEST_STATUSES = ["pending", "approved", "submitted", "completed", "failed", "rejected", "expired", "cancelled"] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** The statuses a request never leaves. */
export const FINAL_STATUSES: readonly RequestStatus[] = ["completed", "failed", "rejected", "expired", "cancelled"];
export function isFinalStatus(status: RequestStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

export const MAX_WAIT_SECONDS = 60;

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address");
const waitSeconds = z
  .number()
  .int()
  .min(0)
  .max(MAX_WAIT_SECONDS, `wait_seconds may be at most ${MAX_WAIT_SECONDS}`)
  .optional()
  .describe(`How long to wait for the person's decision before returning (0–${MAX_WAIT_SECONDS} s; default 0)`);
const credentialId = z.string().min(1).max(100).describe("A credential id from list_credentials");
const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const idempotencyKey = z
  .string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX_LENGTH)
  .regex(/^[\x20-\x7e]+$/, "idempotency_key must be printable ASCII")
  .optional()
  .describe(
    `Makes a retry safe: 1–${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters (a UUID, say), new for each logical ` +
      "payment or signature. Called again by this client with the same key and the same arguments (wait_seconds aside), " +
      "the tool answers the first call's request or payment, never a second one, also while the first is still running; " +
      "with other arguments it is refused (idempotency_key_reused) and nothing changes. Kept as long as its request",
  );
const chainId = z.number().int().positive().describe("An EVM chain id, e.g. 31337 for the local dev chain");

// ---------- inputs ----------
const listCredentialsInput = z.object({});
const getBalanceInput = z.object({
  credential_id: credentialId,
  chain_id: chainId.optional().describe("The chain; may be left out when the service has only one"),
  tokens: z
    .array(address)
    .max(20)
    .optional()
    .describe(
      "ERC-20 contracts to read balances of too; default: the tokens the service lists on that chain and those the " +
        "credential's spending policy caps there",
    ),
});
const signMessageInput = z.object({
  credential_id: credentialId,
  message: z.string().min(1).max(10_000).describe("The text to sign (EIP-191 personal_sign)"),
  wait_seconds: waitSeconds,
  idempotency_key: idempotencyKey,
});
const typedDataSchema = z.object({
  domain: z.record(z.string(), z.unknown()),
  types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
  primaryType: z.string().min(1),
  message: z.record(z.string(), z.unknown()),
});
const signTypedDataInput = z.object({
  credential_id: credentialId,
  typed_data: typedDataSchema.describe("EIP-712 typed data: domain, types, primaryType, message"),
  wait_seconds: waitSeconds,
  idempotency_key: idempotencyKey,
});
const sendTransactionInput = z.object({
  credential_id: credentialId,
  chain_id: chainId,
  to: address.describe("Recipient address"),
  value: z
    .string()
    .regex(/^\d{1,78}$/, "value is an amount of wei as a decimal string")
    .describe("Amount in wei, as a decimal string"),
  data: z
    .string()
    .regex(/^0x([0-9a-fA-F]{2})*$/, "data must be 0x-prefixed hex bytes")
    .max(2 + 2 * 64 * 1024)
    .optional(),
  wait_seconds: waitSeconds,
  idempotency_key: idempotencyKey,
});
const getRequestInput = z.object({ request_id: z.string().min(1).max(100), wait_seconds: waitSeconds });
const listRequestsInput = z.object({
  status: z.enum(REQUEST_STATUSES).optional(),
  limit: z.number().int().min(1).max(100).optional().describe("At most this many, newest first (default 20)"),
});
const cancelRequestInput = z.object({ request_id: z.string().min(1).max(100) });
const getPolicyInput = z.object({ credential_id: credentialId });
const getAllowanceInput = z.object({ credential_id: credentialId });

/** The periods an allowance resets on, in seconds (ERC-7715's periodDuration): an hour, a day, a week. */
export const PERIOD_DURATIONS = [3600, 86_400, 604_800] as const;
const periodAmount = z
  .string()
  .regex(/^(0x0*[1-9a-fA-F][0-9a-fA-F]{0,63}|[1-9]\d{0,77})$/, "periodAmount is a positive amount in base units (decimal or 0x hex)")
  .describe("The cap per period, in base units (wei, or the token's smallest unit), decimal or 0x-prefixed hex as ERC-7715 gives it");
const periodDuration = z
  .number()
  .int()
  .refine((seconds) => (PERIOD_DURATIONS as readonly number[]).includes(seconds), {
    message: "periodDuration is 3600 (an hour), 86400 (a day) or 604800 (a week)",
  })
  .describe("How often the cap resets, in seconds: 3600, 86400 or 604800; the same for every permission of a request");
/** One asset of an allowance the agent asks for, as ERC-7715 names a permission (Advanced Permissions' periodic types). */
const askedPermission = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("native-token-periodic"),
    data: z.object({ periodAmount, periodDuration, justification: z.string().max(500).optional() }),
  }),
  z.object({
    type: z.literal("erc20-token-periodic"),
    data: z.object({
      tokenAddress: address.describe("The ERC-20 contract"),
      periodAmount,
      periodDuration,
      maxPerPayment: periodAmount
        .optional()
        .describe("With any_payee, required: the most one payment may be, in base units (Agent Wallet's addition to ERC-7715)"),
      justification: z.string().max(500).optional(),
    }),
  }),
]);
const requestAllowanceInput = z.object({
  credential_id: credentialId,
  chain_id: chainId,
  to: address.describe(
    "The address whose key this agent holds (ERC-7715's signer): the allowance's only delegate. Agent Wallet holds no key for it",
  ),
  permissions: z.array(askedPermission).min(1).max(12).describe("What may be spent per period: the chain's coin and/or tokens"),
  payees: z.array(address).max(12).optional().describe("Who may be paid; leave out with any_payee"),
  any_payee: z
    .boolean()
    .optional()
    .describe("Tokens only: anyone may be paid, each payment at most its permission's maxPerPayment; the chain then pins no payee"),
  payments: z.number().int().min(1).max(10_000).describe("How many payments in all, over the allowance's whole life"),
  expiry: z.number().int().positive().describe("Unix seconds when the allowance ends: between an hour and 30 days from now"),
  justification: z.string().trim().min(1).max(500).describe("Why the agent asks, in words the person reads before deciding"),
  wait_seconds: waitSeconds,
  idempotency_key: idempotencyKey,
});

// ---------- spending policies ----------
const smallestUnits = z.string().regex(/^\d{1,78}$/, "an amount in the smallest unit (wei), as a decimal string");
const selector = z.string().regex(/^0x[0-9a-fA-F]{8}$/, "a 4-byte function selector, e.g. 0xa9059cbb");

/**
 * What the person allows an agent to ask for with one credential of a grant, checked before a request exists
 * (docs/policies.md). A rule left out limits nothing; an empty policy asks the person for everything.
 */
export const policySchema = z
  .object({
    native: z
      .object({ per_transaction: smallestUnits.optional(), per_day: smallestUnits.optional(), per_week: smallestUnits.optional() })
      .strict()
      .optional(),
    tokens: z
      .array(
        z
          .object({ chain_id: chainId, token: address, per_transaction: smallestUnits.optional(), per_day: smallestUnits.optional() })
          .strict(),
      )
      .max(50)
      .optional(),
    recipients: z.array(address).max(500).optional().describe("Only these recipients, spenders and operators"),
    chains: z.array(chainId).max(50).optional(),
    contracts: z
      .array(z.object({ address, selectors: z.array(selector).max(50).optional() }).strict())
      .max(200)
      .optional()
      .describe("Only calls to these contracts (and, if listed, these functions)"),
    no_unlimited_approvals: z.boolean().optional(),
    typed_data: z
      .object({ verifying_contracts: z.array(address).max(200).optional(), names: z.array(z.string().max(200)).max(200).optional() })
      .strict()
      .optional(),
    sign_message: z.boolean().optional().describe("false: sign_message is refused"),
    requests_per_hour: z.number().int().min(0).max(10_000).optional(),
  })
  .strict();
export type Policy = z.infer<typeof policySchema>;

// ---------- results ----------
const credentialView = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(CREDENTIAL_KINDS),
  address: z.string(),
  mode: z.enum(APPROVAL_MODES),
});
const listCredentialsOutput = z.object({
  credentials: z.array(credentialView),
  account: z
    .object({
      email_hint: z.string().nullable().describe("The start of the person's sign-in email and its domain, e.g. ca…@example.com"),
      client_name: z.string().describe("This client as the person sees it on their Clients screen (its name, or the API key's)"),
    })
    .optional()
    .describe("Whose wallets these are, and which client the person granted them to (absent from servers before it)"),
  chains: z
    .array(z.object({ id: z.number(), name: z.string(), symbol: z.string().describe("The chain's coin") }))
    .optional()
    .describe(
      "The chains this service works on; a credential's spending policy may allow fewer (get_policy). Absent from servers before it",
    ),
});

const fiatValue = z
  .object({
    currency: z.string().describe("ISO 4217, e.g. USD"),
    amount: z.string().describe("The exact value, decimal, e.g. 5000.25"),
    text: z.string().describe("As the person's pages show it, e.g. $5,000.25 (or < $0.01)"),
  })
  .nullable()
  .optional()
  .describe(
    "What the balance is worth, at the Chainlink price feed the service reads on the chain's own RPC; null when no feed is " +
      "configured or it gave no fresh price (never a guess); absent from servers before it",
  );

const balanceOutput = z.object({
  credential_id: z.string(),
  address: z.string(),
  chain_id: z.number(),
  chain_name: z.string(),
  symbol: z.string(),
  wei: z.string().describe("Native balance in wei, decimal"),
  formatted: z.string().describe("The same in whole units, e.g. 1.5"),
  fiat: fiatValue,
  tokens: z
    .array(
      z.object({
        token: z.string(),
        symbol: z.string().nullable().describe("As the contract reports it; null when it does not answer as an ERC-20"),
        decimals: z.number().nullable(),
        balance: z.string().nullable().describe("In the token's smallest unit, decimal; null when it could not be read"),
        formatted: z.string().nullable().describe("The same in whole tokens, e.g. 10.5"),
        fiat: fiatValue,
      }),
    )
    .describe("The balance of each token asked for (or capped by the policy)"),
});

/**
 * What request_allowance's agent receives once the person approved: the allowance's id and, per asset and payee, an
 * ERC-7715 granted permission whose `context` is the signed delegation chain to redeem (DelegationManager's
 * redeemDelegations, from `to`'s key).
 */
const grantedPermission = z.object({
  allowance_id: z.string(),
  chain_id: z.number(),
  from: z.string().describe("The person's account, the delegator"),
  to: z.string().describe("The agent's address, the only delegate"),
  delegation_manager: z.string(),
  granted: z.array(
    z.object({
      chainId: z.string().describe("Hex, as ERC-7715 answers it"),
      address: z.string(),
      expiry: z.number(),
      signer: z.object({ type: z.literal("account"), data: z.object({ address: z.string() }) }),
      permission: z.object({ type: z.string(), data: z.record(z.string(), z.unknown()) }),
      isAdjustmentAllowed: z.boolean(),
      context: z
        .string()
        .describe("The ABI-encoded delegation chain (one delegation, the person's): redeemDelegations' permission context"),
      accountMeta: z.array(z.object({ factory: z.string(), factoryData: z.string() })),
      signerMeta: z.object({ delegationManager: z.string() }),
      payees: z.array(z.string()).describe("Whom this delegation may pay; empty: any payee (tokens, each payment up to maxPerPayment)"),
      payments: z.number().describe("How many payments this delegation allows in all"),
    }),
  ),
});
export type GrantedPermission = z.infer<typeof grantedPermission>;

export const requestView = z.object({
  request_id: z.string(),
  kind: z.enum(REQUEST_KINDS),
  status: z.enum(REQUEST_STATUSES),
  credential_id: z.string(),
  chain_id: z.number().nullable(),
  approval_url: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  signature: z.string().nullable().describe("The signature, once a signing request completed"),
  tx_hash: z.string().nullable().describe("The transaction hash, once a transaction was broadcast"),
  reason: z
    .string()
    .nullable()
    .describe(
      "Why a request was rejected, failed, expired or cancelled; that it was paid from an allowance, or why an allowance did not pay it",
    ),
  signed_amount: z
    .string()
    .nullable()
    .optional()
    .describe(
      "When the person lowered the allowance asked for (an approve or a permit) before signing: the amount signed, in the token's " +
        "smallest unit. The signature or transaction is over this amount, not the one asked",
    ),
  payment: z
    .object({
      header: z.enum(["PAYMENT-SIGNATURE", "X-PAYMENT"]).describe("The header to send the value in when retrying the request (V2, V1)"),
      value: z.string().describe("The header's value"),
    })
    .nullable()
    .optional()
    .describe("An x402 payment the person approved (pay_x402 with an approve credential), once completed: the header to retry with"),
  permission: grantedPermission
    .nullable()
    .optional()
    .describe("An allowance the person gave (request_allowance), once completed: the signed delegations to spend it with"),
});
export type RequestView = z.infer<typeof requestView>;
const listRequestsOutput = z.object({ requests: z.array(requestView) });

/** A rolling allowance: what the cap is, what pending and completed requests hold of it, and when some frees up. */
const allowance = z.object({
  limit: z.string(),
  used: z.string(),
  remaining: z.string(),
  frees_at: z.string().nullable().describe("When the oldest counted request leaves the window"),
});
const policyOutput = z.object({
  credential_id: z.string(),
  mode: z.enum(APPROVAL_MODES),
  policy: policySchema,
  remaining: z.object({
    native_per_transaction: z.string().nullable(),
    native_per_day: allowance.nullable().describe("On the chain with the least left (native caps count each chain on its own)"),
    native_per_week: allowance.nullable().describe("On the chain with the least left"),
    native_by_chain: z
      .array(
        z.object({
          chain_id: z.number(),
          chain_name: z.string(),
          symbol: z.string().describe("The chain's coin, the unit of its amounts (in wei)"),
          per_transaction: z.string().nullable(),
          per_day: allowance.nullable(),
          per_week: allowance.nullable(),
        }),
      )
      .describe("What is left of the native caps on each allowed chain"),
    tokens: z.array(
      z.object({
        chain_id: z.number(),
        token: z.string(),
        per_transaction: z.string().nullable(),
        per_day: allowance.nullable(),
        symbol: z
          .string()
          .nullable()
          .optional()
          .describe(
            "The token's symbol as its contract reports it; null when it does not answer as an ERC-20 (absent from servers before it)",
          ),
        decimals: z
          .number()
          .nullable()
          .optional()
          .describe("The token's decimals, to read the amounts (smallest units) in whole tokens; null and absent as for symbol"),
      }),
    ),
    requests_this_hour: z.object({ limit: z.number(), used: z.number(), remaining: z.number() }).nullable(),
  }),
});
export type PolicyView = z.infer<typeof policyOutput>;

/** An on-chain allowance of a granted credential: each limit, what is left of it this period and when it resets. */
const allowanceOutput = z.object({
  credential_id: z.string(),
  allowances: z.array(
    z.object({
      id: z.string(),
      chain_id: z.number(),
      status: z.string().describe("active, revoking, or expired"),
      over_limit: z.enum(["ask", "refuse"]).describe("What a payment above what is left becomes: a request to the person, or a refusal"),
      expires_at: z.string(),
      limits: z.array(
        z.object({
          token: z.string().nullable().describe("The ERC-20 contract, or null for the chain's coin"),
          symbol: z.string(),
          words: z.string().describe("The limit as the person signed it, in words"),
          per_period: z.string().describe("The cap per period, in whole units"),
          left: z.string().nullable().describe("What is left this period, in whole units (null once nothing can be spent)"),
          resets_at: z.string().nullable().describe("When the next period starts: `left` is the whole cap again"),
          transfers_left_in_all: z
            .number()
            .nullable()
            .optional()
            .describe("Payments left over the allowance's whole life: this count never resets (absent from servers before it)"),
          transfers_left: z.number().nullable().describe("The same count as transfers_left_in_all, under its first name"),
          in_agent_account: z
            .string()
            .optional()
            .describe(
              "With a float: what of `left` is already in the agent's own account, whole units (payments it covers are " +
                "answered at once); absent without a float",
            ),
        }),
      ),
      permission: grantedPermission
        .optional()
        .describe(
          "An allowance the agent's own key spends: the signed delegations to spend it with, as get_request answered them " +
            "(without the request's justification); absent for one Agent Wallet's key spends",
        ),
      slices: z
        .array(z.object({ slice_id: z.string(), to: z.string(), words: z.array(z.string()) }))
        .optional()
        .describe("An allowance the agent's own key spends: the slices it passed on to other keys (register_allowance_slice)"),
    }),
  ),
});
export type AllowanceOutput = z.infer<typeof allowanceOutput>;

const payX402Input = z.object({
  credential_id: credentialId,
  payment_required: z
    .union([z.string().min(1).max(65_536), z.record(z.string(), z.unknown())])
    .describe("The resource's x402 requirement as it gave it: the PAYMENT-REQUIRED header's value (V2), or the 402 body (V1) as JSON"),
  idempotency_key: idempotencyKey,
});

/**
 * An x402 payment: signed within an allowance (the header to retry with), or waiting for the person's approval (its
 * request; get_request answers the header once completed); and what it pays, to whom, for what.
 */
const x402PaymentOutput = z.object({
  header: z
    .enum(["PAYMENT-SIGNATURE", "X-PAYMENT"])
    .nullable()
    .describe("The header to send the value in when retrying the request (V2, V1); null while the person's approval is awaited"),
  value: z.string().nullable().describe("The header's value; null while the person's approval is awaited"),
  payment_id: z.string().describe("The payment's id; for a payment the person approves, its request's id"),
  request_id: z
    .string()
    .nullable()
    .optional()
    .describe(
      "A payment the person approves with their passkey (approve mode; eip3009 or permit2): get_request answers its " +
        "`payment` once completed",
    ),
  approval_url: z.string().nullable().optional().describe("Where the person approves it"),
  paid: z.object({
    amount: z.string().describe("In the token's smallest unit"),
    formatted: z.string().describe("In whole tokens"),
    symbol: z.string(),
    token: z.string(),
    chain_id: z.number(),
    network: z.string().describe("The CAIP-2 network (a V1 requirement's name for it, such as base-sepolia, as its eip155:<id>)"),
  }),
  payee: z.string(),
  resource: z.object({ url: z.string(), description: z.string().nullable() }),
  expires_at: z
    .string()
    .describe("Until when the payee's facilitator can redeem the payment; its amount is held until then or until redeemed"),
  allowance_id: z.string().nullable().describe("The allowance it was signed within; null for a payment the person approves"),
});

const registerAllowanceSliceInput = z.object({
  allowance_id: z.string().min(1).max(100).describe("The allowance (request_allowance's permission.allowance_id) the slice is of"),
  to: address.describe("The sub-agent's key, to which the slice is passed on"),
  contexts: z
    .array(
      z
        .string()
        .regex(/^0x([0-9a-fA-F]{2})+$/, "each context is 0x-prefixed hex bytes")
        .max(2 + 2 * 16_384),
    )
    .min(1)
    .max(12)
    .describe("Each slice's permission context: ABI-encoded [the slice, signed by the agent's key; the allowance's delegation]"),
});
const registerAllowanceSliceOutput = z.object({
  slice_id: z.string(),
  allowance_id: z.string(),
  to: z.string(),
  delegations: z.number().describe("How many delegations of the allowance were passed on"),
});

/** A delegation of the Delegation Framework as JSON carries it: the salt, a uint256, as a decimal string. */
const hexBytes = (name: string, most: number) =>
  z
    .string()
    .regex(/^0x([0-9a-fA-F]{2})*$/, `${name} must be 0x-prefixed hex bytes`)
    .max(2 + 2 * most);
const delegationJson = z.object({
  delegate: address,
  delegator: address,
  authority: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "authority is the 32-byte hash of the delegation it is under"),
  caveats: z
    .array(z.object({ enforcer: address, terms: hexBytes("terms", 16_384), args: hexBytes("args", 4_096) }))
    .min(1)
    .max(8),
  salt: z
    .string()
    .regex(/^\d{1,78}$/, "salt is a uint256 as a decimal string")
    .refine((salt) => BigInt(salt) < 2n ** 256n, "salt is a uint256 as a decimal string, below 2^256"),
  signature: hexBytes("signature", 4_096),
});

const prepareAllowancePaymentInput = z.object({
  credential_id: credentialId,
  chain_id: chainId,
  to: address.describe("The payee, or the token contract for a token's transfer(recipient, amount)"),
  value: sendTransactionInput.shape.value,
  data: sendTransactionInput.shape.data,
});
const prepareAllowancePaymentOutput = z.object({
  allowance_id: z.string(),
  relayer: z.string().describe("The relayer that sends it and pays its gas: the only delegate of the delegation below"),
  delegation: delegationJson.describe(
    "The one-time delegation to sign with the allowance's key (signature empty): from that key to the relayer, under the " +
      "allowance's delegation (authority), allowing exactly this call once (ExactExecution, LimitedCalls 1) until expires_at",
  ),
  typed_data: typedDataSchema.describe("Its EIP-712 typed data, as the DelegationManager verifies it (the salt as a decimal string)"),
  expires_at: z.string().describe("Until when the relayer can send it (its TimestampEnforcer)"),
});
const sendAllowancePaymentInput = z.object({
  credential_id: credentialId,
  chain_id: chainId,
  delegation: delegationJson.describe("prepare_allowance_payment's delegation, signed by the allowance's key"),
  wait_seconds: waitSeconds,
  idempotency_key: idempotencyKey.describe(
    "Makes a retry safe, as for send_transaction; left out, the signed delegation is the key: sent again, it answers the " +
      "first payment",
  ),
});

/** Every tool: its input and result schemas, and whether it asks for a signature. */
export const TOOLS = {
  list_credentials: { input: listCredentialsInput, output: listCredentialsOutput, sensitive: false },
  get_balance: { input: getBalanceInput, output: balanceOutput, sensitive: false },
  sign_message: { input: signMessageInput, output: requestView, sensitive: true },
  sign_typed_data: { input: signTypedDataInput, output: requestView, sensitive: true },
  send_transaction: { input: sendTransactionInput, output: requestView, sensitive: true },
  get_request: { input: getRequestInput, output: requestView, sensitive: false },
  list_requests: { input: listRequestsInput, output: listRequestsOutput, sensitive: false },
  cancel_request: { input: cancelRequestInput, output: requestView, sensitive: false },
  get_policy: { input: getPolicyInput, output: policyOutput, sensitive: false },
  get_allowance: { input: getAllowanceInput, output: allowanceOutput, sensitive: false },
  // signs within an allowance with no tap and answers at once, or answers at once with a request to follow with
  // get_request (approve mode): no task either way
  pay_x402: { input: payX402Input, output: x402PaymentOutput, sensitive: false },
  // asks the person for an allowance that the agent's own key spends: a request like a signature's, with no task
  request_allowance: { input: requestAllowanceInput, output: requestView, sensitive: false },
  // records a slice the agent signed itself, for the person to see: it asks nobody and signs nothing
  register_allowance_slice: { input: registerAllowanceSliceInput, output: registerAllowanceSliceOutput, sensitive: false },
  // the relayer's one-time delegation for a payment of an allowance the agent's key spends: it signs it, the server sends
  prepare_allowance_payment: { input: prepareAllowancePaymentInput, output: prepareAllowancePaymentOutput, sensitive: false },
  // pays at once or is refused (or goes to the person, as a transaction above the allowance does): no task
  send_allowance_payment: { input: sendAllowancePaymentInput, output: requestView, sensitive: false },
} as const;
export type ToolName = keyof typeof TOOLS;
export type ToolInput<T extends ToolName> = z.infer<(typeof TOOLS)[T]["input"]>;
export type ToolOutput<T extends ToolName> = z.infer<(typeof TOOLS)[T]["output"]>;
