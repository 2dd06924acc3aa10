import { db } from "@/lib/db";
import { systemClock, type Clock } from "@/lib/clock";
import { clientFromMetadataDocument, isClientIdUrl } from "./client-metadata-document";

/**
 * The OAuth client a client_id names, or null when none: a registered client, or for a URL the client
 * its metadata document describes (fetched when not cached; throws ClientMetadataDocumentError).
 */
export async function findOAuthClient(clientId: string, clock: Clock = systemClock) {
  const client = isClientIdUrl(clientId)
    ? await clientFromMetadataDocument(clientId, clock)
    : await db().client.findUnique({ where: { id: clientId } });
  return client?.kind === "oauth" ? client : null;
}

/** A registered client's redirect URIs. */
export function redirectUrisOf(client: { redirectUris: string }): string[] {
  return JSON.parse(client.redirectUris) as string[];
}
