// The MCP tools' inputs and results (DESIGN.md §3). The server registers these
// schemas, and the SDK types its methods from them: one definition for both.
import { z } from "zod";

export const REQUEST_KINDS = ["sign_message", "sign_typed_data", "send_transaction"] as const;
export const REQUEST_STATUSES = ["pending", "approved", "submitted", "completed", "failed", "rejected", "expired", "cancelled"] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

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
const chainId = z.number().int().positive().describe("An EVM chain id, e.g. 31337 for the local dev chain");

// ---------- inputs ----------
export const listCredentialsInput = z.object({});
export const getBalanceInput = z.object({ credential_id: credentialId, chain_id: chainId });
export const signMessageInput = z.object({
  credential_id: credentialId,
  message: z.string().min(1).max(10_000).describe("The text to sign (EIP-191 personal_sign)"),
  wait_seconds: waitSeconds,
});
export const typedDataSchema = z.object({
  domain: z.record(z.string(), z.unknown()),
  types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
  primaryType: z.string().min(1),
  message: z.record(z.string(), z.unknown()),
});
export const signTypedDataInput = z.object({
  credential_id: credentialId,
  typed_data: typedDataSchema.describe("EIP-712 typed data: domain, types, primaryType, message"),
  wait_seconds: waitSeconds,
});
export const sendTransactionInput = z.object({
  credential_id: credentialId,
  chain_id: chainId,
  to: address.describe("Recipient address"),
  value: z.string().regex(/^\d{1,78}$/, "value is an amount of wei as a decimal string").describe("Amount in wei, as a decimal string"),
  data: z.string().regex(/^0x([0-9a-fA-F]{2})*$/, "data must be 0x-prefixed hex bytes").max(2 + 2 * 64 * 1024).optional(),
  wait_seconds: waitSeconds,
});
export const getRequestInput = z.object({ request_id: z.string().min(1).max(100), wait_seconds: waitSeconds });
export const listRequestsInput = z.object({
  status: z.enum(REQUEST_STATUSES).optional(),
  limit: z.number().int().min(1).max(100).optional().describe("At most this many, newest first (default 20)"),
});
export const cancelRequestInput = z.object({ request_id: z.string().min(1).max(100) });

// ---------- results ----------
export const credentialView = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(["evm", "evm_watch"]),
  address: z.string(),
  mode: z.enum(["read", "approve"]),
});
export const listCredentialsOutput = z.object({ credentials: z.array(credentialView) });

export const balanceOutput = z.object({
  credential_id: z.string(),
  address: z.string(),
  chain_id: z.number(),
  chain_name: z.string(),
  symbol: z.string(),
  wei: z.string().describe("Native balance in wei, decimal"),
  formatted: z.string().describe("The same in whole units, e.g. 1.5"),
});

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
  reason: z.string().nullable().describe("Why a request was rejected, failed, expired or cancelled"),
});
export type RequestView = z.infer<typeof requestView>;
export const listRequestsOutput = z.object({ requests: z.array(requestView) });

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
} as const;
export type ToolName = keyof typeof TOOLS;
export type ToolInput<T extends ToolName> = z.infer<(typeof TOOLS)[T]["input"]>;
export type ToolOutput<T extends ToolName> = z.infer<(typeof TOOLS)[T]["output"]>;
