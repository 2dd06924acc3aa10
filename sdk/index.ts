// agent-wallet/sdk: the typed client of Agent Wallet's public surface.
export { AgentWalletClient, FINAL_STATUSES, PROTOCOL_VERSION, SDK_VERSION } from "./client";
export type { AgentWalletClientOptions, ApiKeyClientOptions, CallOptions, OAuthClientOptions, WaitOptions } from "./client";
export {
  buildAuthorizationUrl,
  codeChallengeS256,
  discover,
  discoverResource,
  exchangeCode,
  generateCodeVerifier,
  generateState,
  parseBearerChallenge,
  parseCallback,
  refresh,
  register,
  wellKnownUrl,
} from "./oauth";
export type { AuthorizationRequest, AuthorizationServerMetadata, ClientMetadata, Discovery, FetchLike, ProtectedResourceMetadata, RegisteredClient, TokenSet } from "./oauth";
export { AgentWalletError, AuthenticationError, InvalidInputError, NetworkError, OAuthError, ServerError, SignInRequiredError, ToolError, WaitTimeoutError } from "./errors";
export { MAX_WAIT_SECONDS, REQUEST_KINDS, REQUEST_STATUSES, TOOLS } from "../lib/mcp/schemas";
export type { RequestKind, RequestStatus, RequestView, ToolInput, ToolName, ToolOutput } from "../lib/mcp/schemas";
