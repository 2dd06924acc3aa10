import { LRUCache } from "lru-cache";
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { recordAudit } from "@/lib/audit";
import { addSeconds, type Clock } from "@/lib/clock";
import { RateLimitedError } from "@/lib/http/errors";
import { spendRateLimit } from "@/lib/limits/rate-limit";
import { fetchPublicJson, PublicFetchError } from "@/lib/net/public-fetch";
import { InvalidClientError, OAuthEndpointError } from "./errors";
import { clientFields, parseClientMetadata } from "./registration";
import { clientChosenUrl } from "./redirect-uri";

/** How long a document is used without fetching it again: its max-age, else the default, at most the cap. */
const DEFAULT_CACHE_SECONDS = 5 * 60;
const MAX_CACHE_SECONDS = 24 * 60 * 60;
const MAX_CLIENT_ID_LENGTH = 2000;
/** A document whose fetch failed is not fetched again for this long: asking for it meanwhile fails the same way. */
const FAILURE_CACHE_SECONDS = 60;

/**
 * A client_id URL whose client metadata document cannot be used: not a valid URL for it, not
 * fetchable, or not valid metadata. `invalid_client` at the token endpoint; a page at authorize.
 */
export class ClientMetadataDocumentError extends InvalidClientError {}

/**
 * Whether a client_id is a URL, naming a client metadata document (draft-ietf-oauth-client-id-metadata-document)
 * rather than a registered client: ids this service issues never contain a colon.
 */
export function isClientIdUrl(clientId: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(clientId);
}

/**
 * Why a URL cannot be a client_id, or null when it can (the draft's §3): https (http only with the
 * development setting), a path, no fragment, no user information, no dot segments, and written as
 * it normalizes, so that one document has exactly one client_id.
 */
export function clientIdUrlProblem(value: string, allowHttp: boolean): string | null {
  const checked = clientChosenUrl(value, MAX_CLIENT_ID_LENGTH);
  if ("problem" in checked) return checked.problem;
  const { url } = checked;
  if (url.protocol !== "https:" && !(allowHttp && url.protocol === "http:")) return "must use https";
  const rawPath = value.replace(/^[a-z]+:\/\/[^/?]*/i, "").split("?")[0];
  if (rawPath.length < 2) return "must contain a path";
  if (rawPath.split("/").some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) return "must not contain . or .. path segments";
  if (url.href !== value) return `must be written in normalized form (${url.href})`;
  return null;
}

/**
 * Seconds to use a fetched document before fetching it again, from its Cache-Control: `no-store` or
 * `no-cache` mean every use fetches it; `max-age` is honoured up to a day; without either, 5 minutes.
 */
export function cacheLifetimeSeconds(cacheControl: string | null): number {
  const directives = (cacheControl ?? "")
    .toLowerCase()
    .split(",")
    .map((entry) => entry.trim());
  if (directives.includes("no-store") || directives.includes("no-cache")) return 0;
  const maxAge = directives.map((entry) => /^max-age=(\d+)$/.exec(entry)).find(Boolean);
  return maxAge ? Math.min(Number(maxAge[1]), MAX_CACHE_SECONDS) : DEFAULT_CACHE_SECONDS;
}

/** The host whose document described a client, or null for a registered client or an API key. */
export function metadataDocumentHost(client: { id: string; documentFetchedAt: Date | null }): string | null {
  return client.documentFetchedAt ? new URL(client.id).host : null;
}

/** Fetches the document and checks it as a public client's metadata whose client_id is its own URL. */
async function fetchAndCheck(clientId: string) {
  let body: unknown;
  let cacheControl: string | null;
  try {
    ({ body, cacheControl } = await fetchPublicJson(new URL(clientId), { allowPrivateHosts: config().clientMetadataAllowPrivateHosts }));
  } catch (error) {
    if (error instanceof PublicFetchError)
      throw new ClientMetadataDocumentError(`The client metadata document was not fetched: ${error.message}`);
    throw error;
  }
  const document = body as Record<string, unknown> | null;
  if (document && typeof document === "object" && !Array.isArray(document)) {
    if (document.client_id !== clientId)
      throw new ClientMetadataDocumentError("The client metadata document's client_id does not equal its URL");
    if (document.client_secret !== undefined || document.client_secret_expires_at !== undefined)
      throw new ClientMetadataDocumentError(
        "A client metadata document must not contain a client secret: only public clients are supported",
      );
  }
  try {
    return { metadata: parseClientMetadata(body, "The client metadata document"), lifetime: cacheLifetimeSeconds(cacheControl) };
  } catch (error) {
    if (error instanceof OAuthEndpointError)
      throw new ClientMetadataDocumentError(`The client metadata document is invalid: ${error.message}`);
    throw error;
  }
}

/**
 * Why each document URL whose fetch failed lately failed, until when; kept in this process's memory (a failure writes
 * nothing). A flood of failing URLs evicts the oldest first: their host's budget still bounds their fetches.
 */
const failures = new LRUCache<string, { message: string; until: number }>({ max: 10_000 });

/**
 * The document fetched and checked (`fetchAndCheck`), unless it failed within FAILURE_CACHE_SECONDS (the same error
 * again, at once) or its host's budget of fetches (RATE_LIMIT_CLIENT_METADATA_PER_HOST, counted across instances) is
 * spent: anyone can name any URL, and the service must not fetch from one host on their behalf without bound.
 */
async function fetchClientMetadata(clientId: string, clock: Clock) {
  const failed = failures.get(clientId);
  const now = clock().getTime();
  if (failed && failed.until > now) {
    const seconds = Math.ceil((failed.until - now) / 1000);
    throw new ClientMetadataDocumentError(`${failed.message} (it is not fetched again for ${seconds} s)`);
  }
  const host = new URL(clientId).hostname;
  try {
    await spendRateLimit("clientMetadataFetch", { host });
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    const tooOften = `documents are fetched from ${host} too often; try again in ${error.retryAfterSeconds} s`;
    throw new ClientMetadataDocumentError(`The client metadata document was not fetched: ${tooOften}`);
  }
  try {
    return await fetchAndCheck(clientId);
  } catch (error) {
    if (error instanceof ClientMetadataDocumentError)
      failures.set(clientId, { message: error.message, until: clock().getTime() + FAILURE_CACHE_SECONDS * 1000 });
    throw error;
  }
}

/**
 * The client a URL client_id names: its stored row while the cached document is fresh (or the client
 * is revoked), else the document fetched again and stored. Throws ClientMetadataDocumentError when
 * the URL or the document cannot be used (or could not within the last minute), or when its host is
 * fetched too often; the stored row is then left as it was.
 */
export async function clientFromMetadataDocument(clientId: string, clock: Clock) {
  const { clientMetadataAllowPrivateHosts } = config();
  const problem = clientIdUrlProblem(clientId, clientMetadataAllowPrivateHosts);
  if (problem) throw new ClientMetadataDocumentError(`A client_id URL ${problem}`);
  const stored = await db().client.findUnique({ where: { id: clientId } });
  if (stored && (stored.status !== "active" || (stored.documentExpiresAt && stored.documentExpiresAt > clock()))) return stored;
  const { metadata, lifetime } = await fetchClientMetadata(clientId, clock);
  const now = clock();
  const host = new URL(clientId).host;
  const { row, redirectUris } = clientFields(metadata, host);
  const document = { ...row, documentFetchedAt: now, documentExpiresAt: addSeconds(now, lifetime) };
  const client = await db().client.upsert({
    where: { id: clientId },
    create: { id: clientId, kind: "oauth", createdAt: now, ...document },
    update: document,
  });
  if (!stored) {
    const redirectHosts = redirectUris.map((uri) => new URL(uri).host);
    await recordAudit({ type: "client.registered", clientId, data: { name: row.name, redirectHosts, metadataDocument: host } }, clock);
  }
  return client;
}
