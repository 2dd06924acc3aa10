// agent-wallet/sdk: the typed client of Agent Wallet's public surface.
export { AgentWalletClient, PROTOCOL_VERSION, SDK_VERSION } from "./client";
export type { AgentWalletClientOptions, ApiKeyClientOptions, CallOptions, OAuthClientOptions, WaitOptions } from "./client";
export { dpopProof, dpopSigner, generateDpopJwk, generateDpopKey } from "./dpop";
export type { DpopKey, DpopSigner } from "./dpop";
export { callPaidTool, payingFetch } from "./x402";
export type { McpToolCall, McpToolResult, PaidToolOptions, PayingFetchOptions } from "./x402";
export { DEFAULT_MAX_PER_PAYMENT } from "./x402-guard";
export { ownRedemption } from "./own-allowance";
export { AllowancePaymentError, payFromAllowance } from "./allowance-payment";
export type { AllowancePayment, AllowancePaymentOptions } from "./allowance-payment";
export type { OwnKey } from "./own-x402";
export { sliceAllowance, SliceError } from "./allowance-slice";
export type { AllowanceSlice, SliceSigner } from "./allowance-slice";
export type { AllowanceCall } from "./own-allowance";
export type { CheckedOffer, PaymentRequirement } from "./x402-guard";
export {
  buildAuthorizationUrl,
  codeChallengeS256,
  DEVICE_CODE_GRANT_TYPE,
  discover,
  discoverResource,
  exchangeCode,
  generateCodeVerifier,
  generateState,
  parseBearerChallenge,
  parseCallback,
  pollDeviceToken,
  refresh,
  register,
  revokeToken,
  startDeviceAuthorization,
  wellKnownUrl,
} from "./oauth";
export type {
  AuthorizationRequest,
  AuthorizationServerMetadata,
  ClientMetadata,
  DeviceAuthorization,
  Discovery,
  FetchLike,
  ProtectedResourceMetadata,
  RegisteredClient,
  TokenSet,
} from "./oauth";
export {
  AgentWalletError,
  AuthenticationError,
  InvalidInputError,
  NetworkError,
  OAuthError,
  PaymentNotApprovedError,
  PaymentRefusedError,
  ServerError,
  SignInRequiredError,
  ToolError,
  WaitTimeoutError,
} from "./errors";
export type { PaymentRefusal } from "./errors";
export {
  API_KEY_PREFIX,
  APPROVAL_MODES,
  FINAL_STATUSES,
  isFinalStatus,
  MAX_WAIT_SECONDS,
  PERIOD_DURATIONS,
  REQUEST_KINDS,
  REQUEST_STATUSES,
  TOOLS,
} from "../contract";
export { formatUnits, limitsInWords, readableUnits } from "../contract/limits-in-words";
export type {
  ApprovalMode,
  GrantedPermission,
  Policy,
  PolicyView,
  RequestKind,
  RequestStatus,
  RequestView,
  ToolInput,
  ToolName,
  ToolOutput,
} from "../contract";
