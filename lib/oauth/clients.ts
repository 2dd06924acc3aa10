import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { cancelPendingRequests } from "@/lib/wallet/request-lifecycle";
import { clientFromMetadataDocument, isClientIdUrl } from "./client-metadata-document";

export type ClientRevocationReason = "replay" | "user";

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

/**
 * Revokes a client registration and every grant made to it. Access tokens stop
 * working on their next call because /mcp checks client and grant status.
 */
export async function revokeClient(clientId: string, reason: ClientRevocationReason, clock: Clock = systemClock): Promise<void> {
  const now = clock();
  const [revoked] = await db().$transaction([
    db().client.updateMany({ where: { id: clientId, status: "active" }, data: { status: "revoked", revokedAt: now, revokedWhy: reason } }),
    db().grant.updateMany({ where: { clientId, status: "active" }, data: { status: "revoked", revokedAt: now } }),
  ]);
  if (revoked.count) await recordAudit({ type: "client.revoked", clientId, data: { reason } }, clock);
  await cancelPendingRequests({ clientId }, "The client's access was revoked", clock);
}
