// Typed errors of the Agent Wallet SDK. Every error the SDK throws on purpose is
// an AgentWalletError, so a caller can tell "sign in again" from "the tool said
// no" from "the network is down" without parsing messages.

export class AgentWalletError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** An OAuth protocol error (RFC 6749 §5.2, RFC 7591 §3.2.2): `code` is the `error` field. */
export class OAuthError extends AgentWalletError {
  constructor(
    readonly code: string,
    readonly description: string | undefined,
    readonly status?: number,
  ) {
    super(description ? `${code}: ${description}` : code);
  }
}

/**
 * `/mcp` refused the bearer (401). `description` is the server's
 * `error_description` from the WWW-Authenticate challenge, when it gave one
 * (e.g. "The client was revoked"); `resourceMetadata` is where to rediscover.
 */
export class AuthenticationError extends AgentWalletError {
  constructor(
    message: string,
    readonly description?: string,
    readonly resourceMetadata?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The session cannot be recovered: `/mcp` answered 401 and there was no refresh
 * token, or the refresh failed (expired, spent, client revoked). Sign in again.
 */
export class SignInRequiredError extends AuthenticationError {}

/**
 * A tool answered with `isError` (e.g. a `read` credential asked to sign): the tool's own message, and what it says
 * for programs when it says more (its structuredContent), e.g. a policy refusal's
 * `{error: "policy_violation", rule: "native.per_day", allowance: {limit, remaining}}`.
 */
export class ToolError extends AgentWalletError {
  constructor(
    readonly tool: string,
    readonly toolMessage: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(toolMessage);
  }
}

/** The server answered something that is not what the protocol promises (bad JSON, a JSON-RPC error, a 5xx). */
export class ServerError extends AgentWalletError {
  constructor(
    message: string,
    readonly status?: number,
    /** the JSON-RPC error code, when the server sent one */
    readonly rpcCode?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The server could not be reached. */
export class NetworkError extends AgentWalletError {}

/** waitForRequest gave up before the request reached a final status. */
export class WaitTimeoutError extends AgentWalletError {
  constructor(
    readonly requestId: string,
    readonly lastStatus: string,
  ) {
    super(`Request ${requestId} is still ${lastStatus}`);
  }
}

/** A one-tap x402 payment's request ended without the person's signature (rejected, expired, cancelled): nothing was paid. */
export class PaymentNotApprovedError extends AgentWalletError {
  constructor(
    readonly requestId: string,
    readonly status: string,
    readonly reason: string | null,
  ) {
    super(`The payment's request ${requestId} is ${status}${reason ? ` (${reason})` : ""}: nothing was paid`);
  }
}

/** The SDK refused a tool's input before sending it (it does not match the tool's schema). */
export class InvalidInputError extends AgentWalletError {
  constructor(
    readonly tool: string,
    message: string,
  ) {
    super(message);
  }
}

/** Why the SDK refused a requirement before pay_x402 was called. */
export type PaymentRefusal = "other_resource" | "over_max" | "no_max" | "unreadable" | "refused_by_hook" | "not_own_key_payable";

/**
 * The SDK refused to pay a resource's x402 requirement before anything was signed (pay_x402 was never called): it is
 * for another resource than the one fetched or the tool called, it asks more than the most per payment (or is in a
 * token with no most), the SDK cannot read it, `beforePay` said no, or (paying with your own key) no offer is one that
 * key can pay: exact by eip3009 in a token of its allowance that may pay your key. `requirement` is what the resource asked.
 */
export class PaymentRefusedError extends AgentWalletError {
  constructor(
    readonly reason: PaymentRefusal,
    message: string,
    readonly requirement: unknown,
  ) {
    super(`${message.replace(/[.\s]+$/, "")}. Nothing was signed.`);
  }
}
