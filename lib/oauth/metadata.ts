import type { Config } from "@/lib/config";
import { DPOP_ALGORITHMS } from "./dpop-proof";

export const SCOPES = ["mcp", "offline_access"] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * RFC 8414 authorization-server metadata: the seed's fields, the RFC 7009 revocation endpoint (its auth
 * methods too, since omitting them means client_secret_basic), RFC 8628's device authorization endpoint,
 * RFC 9207's `iss` on authorization responses, client_ids that are URLs of client metadata documents
 * (lib/oauth/client-metadata-document.ts), and RFC 9449's DPoP proofs at the token endpoint.
 */
export function authorizationServerMetadata(config: Config) {
  return {
    issuer: config.baseUrl,
    authorization_endpoint: `${config.baseUrl}/oauth/authorize`,
    token_endpoint: `${config.baseUrl}/oauth/token`,
    registration_endpoint: `${config.baseUrl}/oauth/register`,
    revocation_endpoint: `${config.baseUrl}/oauth/revoke`,
    // RFC 8628 §4: the device grant is found here; grant_types_supported stays the seed's two (decision 0017).
    device_authorization_endpoint: `${config.baseUrl}/oauth/device_authorization`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    scopes_supported: [...SCOPES],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
  };
}

/**
 * RFC 9728 protected-resource metadata of the MCP endpoint: the seed's fields, and DPoP (RFC 9728 §2's fields for
 * RFC 9449): proofs of these algorithms are accepted, and a bearer token still is.
 */
export function protectedResourceMetadata(config: Config) {
  return {
    resource: config.mcpResource,
    authorization_servers: [config.baseUrl],
    bearer_methods_supported: ["header"],
    scopes_supported: ["mcp"],
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    dpop_bound_access_tokens_required: false,
  };
}

/** Where a client finds the protected-resource metadata (the 401 challenge points here). */
export function protectedResourceMetadataUrl(config: Config): string {
  return `${config.baseUrl}/.well-known/oauth-protected-resource`;
}
