import type { Config } from "@/lib/config";

export const SCOPES = ["mcp", "offline_access"] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * RFC 8414 authorization-server metadata: the seed's fields, the RFC 7009 revocation endpoint (its auth
 * methods too, since omitting them means client_secret_basic), RFC 8628's device authorization endpoint,
 * RFC 9207's `iss` on authorization responses, and client_ids that are URLs of client metadata documents
 * (lib/oauth/client-metadata-document.ts).
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
  };
}

/** RFC 9728 protected-resource metadata of the MCP endpoint. */
export function protectedResourceMetadata(config: Config) {
  return {
    resource: config.mcpResource,
    authorization_servers: [config.baseUrl],
    bearer_methods_supported: ["header"],
    scopes_supported: ["mcp"],
  };
}

/** Where a client finds the protected-resource metadata (the 401 challenge points here). */
export function protectedResourceMetadataUrl(config: Config): string {
  return `${config.baseUrl}/.well-known/oauth-protected-resource`;
}
