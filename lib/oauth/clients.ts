import { db, selectRows } from "@/lib/db";
import { PreparedSelect } from "@/lib/db/prepared";
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

const CLIENT_KIND = new PreparedSelect<{ kind: string }>("client_kind", `SELECT "kind" FROM "Client" WHERE "id" = ?`);

/** Whether a client_id names an OAuth client (findOAuthClient's answer), as the token endpoint asks on every exchange. */
export async function isOAuthClient(clientId: string, clock: Clock = systemClock): Promise<boolean> {
  if (isClientIdUrl(clientId)) return (await findOAuthClient(clientId, clock)) !== null;
  const [client] = await selectRows(CLIENT_KIND, clientId);
  return client?.kind === "oauth";
}

/** A registered client's redirect URIs. */
export function redirectUrisOf(client: { redirectUris: string }): string[] {
  return JSON.parse(client.redirectUris) as string[];
}
