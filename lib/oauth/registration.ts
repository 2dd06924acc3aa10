import { z } from "zod";
import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { randomId } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { type JsonBodyError, parseJsonBody } from "@/lib/http/input-limits";
import { InvalidClientMetadataError, InvalidRedirectUriError } from "./errors";
import { visibleName } from "@/lib/text/visible-text";
import { redirectUriProblem } from "./redirect-uri";

export const REGISTRATION_BODY_LIMIT = 16 * 1024;
const MAX_REDIRECT_URIS = 10;
const MAX_NAME = 200;

/** RFC 8628's grant type: a client that registers it may use the device authorization endpoint (docs/decisions/0017). */
export const DEVICE_CODE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code";
/** The seed's grant types: what a client gets when it names none. */
const DEFAULT_GRANT_TYPES = ["authorization_code", "refresh_token"] as const;
const GRANT_TYPES = [...DEFAULT_GRANT_TYPES, DEVICE_CODE_GRANT_TYPE] as const;
const RESPONSE_TYPES = ["code"] as const;

const text = (max: number) => z.string().max(max);
/** The name of a client that gave none and has no redirect URI to be named after. */
const UNNAMED_CLIENT = "Unnamed application";

/**
 * RFC 7591 client metadata. The seed's fields are checked strictly; the other
 * registered fields that real clients send are kept when well-formed, and
 * unknown fields are ignored.
 */
const registrationSchema = z.object({
  redirect_uris: z.array(z.string()).max(MAX_REDIRECT_URIS, `redirect_uris may list at most ${MAX_REDIRECT_URIS} URIs`).optional(),
  client_name: z
    .string()
    .trim()
    .min(1, "client_name must not be empty")
    .max(MAX_NAME, `client_name may be at most ${MAX_NAME} characters`)
    // The consent screen and approval pages show it: nothing in it may hide or reorder what a person reads.
    .superRefine(visibleName("client_name"))
    .optional(),
  token_endpoint_auth_method: z
    .literal("none", { error: "token_endpoint_auth_method must be none: only public clients are supported" })
    .optional(),
  grant_types: z
    .array(z.enum(GRANT_TYPES, { error: `grant_types may contain only ${GRANT_TYPES.join(", ")}` }))
    .min(1, "grant_types must not be empty")
    .optional(),
  response_types: z.array(z.enum(RESPONSE_TYPES, { error: "response_types may contain only code" })).optional(),
  // OpenID Connect Dynamic Client Registration §2; VS Code and other native clients send it.
  application_type: z.enum(["web", "native"], { error: "application_type must be web or native" }).optional(),
  scope: text(500).optional(),
  client_uri: text(2000).optional(),
  logo_uri: text(2000).optional(),
  tos_uri: text(2000).optional(),
  policy_uri: text(2000).optional(),
  software_id: text(200).optional(),
  software_version: text(200).optional(),
  contacts: z.array(text(320)).max(10).optional(),
});

const OPTIONAL_FIELDS = [
  "application_type",
  "scope",
  "client_uri",
  "logo_uri",
  "tos_uri",
  "policy_uri",
  "software_id",
  "software_version",
  "contacts",
] as const;

export type RegistrationResponse = {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: "none";
  grant_types: string[];
  response_types: string[];
  client_id_issued_at: number;
} & Partial<Record<(typeof OPTIONAL_FIELDS)[number], unknown>>;

/** Parses a registration body (raw text) into checked metadata, or throws an RFC 7591 error. */
export function parseRegistration(body: string) {
  let raw: unknown;
  try {
    raw = parseJsonBody(body);
  } catch (error) {
    throw new InvalidClientMetadataError(`The request body must be a JSON object: ${(error as JsonBodyError).message}`);
  }
  return parseClientMetadata(raw, "The request body");
}

/**
 * Checks client metadata by the registration rules: a registration body, or a client metadata
 * document (lib/oauth/client-metadata-document.ts). `what` names the JSON in the error.
 */
export function parseClientMetadata(raw: unknown, what: string) {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new InvalidClientMetadataError(`${what} must be a JSON object`);
  // Some clients serialize unset optional fields as null: null means absent.
  const present = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null));
  const result = registrationSchema.safeParse(present);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue.path.join(".");
    const message = issue.message.includes(field.split(".")[0] ?? "") ? issue.message : `${field}: ${issue.message}`;
    if (issue.path[0] === "redirect_uris") throw new InvalidRedirectUriError(message);
    throw new InvalidClientMetadataError(message);
  }
  const { redirect_uris = [], grant_types = [...DEFAULT_GRANT_TYPES], ...rest } = result.data;
  // Only the redirect-based grant needs a redirect URI: a device-only client (RFC 8628) has none.
  if (grant_types.includes("authorization_code") && !redirect_uris.length) {
    throw new InvalidRedirectUriError("redirect_uris must list at least one URI");
  }
  redirect_uris.forEach((uri, index) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidRedirectUriError(`redirect_uris[${index}] ${problem}`);
  });
  return { ...rest, redirect_uris, grant_types };
}

/** The grant types a client registered (the seed's two when it named none). */
export function registeredGrantTypes(client: { metadata: string }): string[] {
  return (JSON.parse(client.metadata) as { grant_types?: string[] }).grant_types ?? [...DEFAULT_GRANT_TYPES];
}

export type ValidatedRegistration = ReturnType<typeof parseRegistration>;

/**
 * The Client row's fields that checked metadata decides. Without a client_name the client is named
 * after `fallbackHost`.
 */
export function clientFields(metadata: ValidatedRegistration, fallbackHost: string) {
  const redirectUris = [...new Set(metadata.redirect_uris)];
  const extra = Object.fromEntries(
    OPTIONAL_FIELDS.filter((field) => metadata[field] !== undefined).map((field) => [field, metadata[field]]),
  );
  const row = {
    name: metadata.client_name ?? fallbackHost,
    redirectUris: JSON.stringify(redirectUris),
    metadata: JSON.stringify({ ...extra, grant_types: metadata.grant_types }),
  };
  return { row, redirectUris, extra };
}

/** Registers a public client and returns the RFC 7591 response body. */
export async function registerClient(metadata: ValidatedRegistration, clock: Clock = systemClock): Promise<RegistrationResponse> {
  const now = clock();
  const firstRedirect = metadata.redirect_uris[0];
  const { row, redirectUris, extra } = clientFields(metadata, firstRedirect ? new URL(firstRedirect).host : UNNAMED_CLIENT);
  const { name } = row;
  const client = await db().client.create({ data: { id: randomId("c_"), kind: "oauth", ...row, createdAt: now } });
  await recordAudit(
    { type: "client.registered", clientId: client.id, data: { name, redirectHosts: redirectUris.map((uri) => new URL(uri).host) } },
    clock,
  );
  return {
    client_id: client.id,
    client_name: name,
    redirect_uris: redirectUris,
    token_endpoint_auth_method: "none",
    grant_types: metadata.grant_types,
    response_types: [...RESPONSE_TYPES],
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    ...extra,
  };
}
