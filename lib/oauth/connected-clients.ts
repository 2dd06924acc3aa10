import { db } from "@/lib/db";
import { recordAuditIn, type AuditInput } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { cancellationEvents, cancelPendingIn } from "@/lib/wallet/request-lifecycle";
import { stopAllowancesIn, type Stopped } from "@/lib/allowances/stop";
import { policyStanding } from "@/lib/wallet/policy";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { Hex } from "viem";
import { NotFoundError } from "@/lib/http/errors";
import { guarded, requireStepUp } from "@/lib/auth/step-up";
import { AllowanceError } from "@/lib/allowances/allowances";
import type { SignedRevocation } from "@/lib/allowances/person";
import { revokeAllowances, sendStoredRevocations } from "@/lib/allowances/revocation";
import { chainById } from "@/lib/wallet/chains";
import { allowanceViews, type AllowanceView } from "@/lib/allowances/view";
import { listContacts } from "@/lib/wallet/address-book";
import { redirectUrisOf } from "./clients";
import { metadataDocumentHost } from "./client-metadata-document";

/** A granted credential's spending limits and what is left of them now (approve or allowance mode, active grant only). */
type Limits = Awaited<ReturnType<typeof policyStanding>>;

export type ConnectedClient = {
  clientId: string;
  /** The grant the row describes and edits: the newest of the person's approvals of this client. */
  grantId: string;
  kind: "oauth" | "api_key";
  name: string;
  status: "active" | "revoked";
  redirectHosts: string[];
  /** For a client described by a client metadata document: the host it was fetched from. */
  metadataHost: string | null;
  keyHint: string | null;
  connectedAt: Date;
  lastUsedAt: Date | null;
  staysConnected: boolean;
  credentials: { id: string; name: string; address: string; mode: string; limits: Limits | null }[];
  /** Its allowances, revoked ones included (their payments stay readable), under any of the person's grants to it. */
  allowances: ClientAllowance[];
};

/** An allowance as /clients shows it: the wallet and chain by name, spends linked to the explorer when there is one. */
export type ClientAllowance = AllowanceView & { walletName: string; chainName: string; explorerUrl: string | null };

/** The client_uri a client registered or published, when it is a URL. */
function clientUriHost(client: { metadata: string }): string | null {
  const uri = (JSON.parse(client.metadata) as { client_uri?: unknown }).client_uri;
  if (typeof uri !== "string" || !URL.canParse(uri)) return null;
  return new URL(uri).host;
}

/**
 * Who asks, for the approval page: the client's claimed name, where it sends people back, since when it is
 * connected, and every host it names (redirect URIs, client_uri, metadata document), which a sign-in is checked against.
 */
export async function requestingClient(userId: string, grantId: string) {
  const grant = await db().grant.findFirst({ where: { id: grantId, userId }, include: { client: true } });
  if (!grant) return null;
  const redirectHosts = [...new Set(redirectUrisOf(grant.client).map((uri) => new URL(uri).host))];
  const metadataHost = metadataDocumentHost(grant.client);
  return {
    kind: grant.client.kind as ConnectedClient["kind"],
    redirectHosts,
    metadataHost,
    hosts: [...new Set([...redirectHosts, clientUriHost(grant.client), metadataHost].filter((host): host is string => host !== null))],
    connectedAt: grant.createdAt,
  };
}

/**
 * Every client the person granted and every personal API key, newest first.
 * A client is shown revoked when the person's grants to it, or the client
 * registration itself, were revoked.
 */
export async function listConnectedClients(userId: string, clock: Clock = systemClock): Promise<ConnectedClient[]> {
  const now = clock();
  const grants = await db().grant.findMany({
    where: { userId },
    orderBy: { createdAt: "desc" },
    include: {
      client: true,
      credentials: { include: { credential: { select: { id: true, name: true, address: true } } } },
    },
  });
  // revoked ones too: what an allowance paid stays readable after it ends
  const contacts = await listContacts(userId);
  const nameOf = (address: string) => contacts.find((contact) => contact.address.toLowerCase() === address.toLowerCase())?.label ?? address;
  const allowances = await allowanceViews({ userId }, { revoked: true, person: { nameOf } });
  const walletNames = new Map(
    (await db().credential.findMany({ where: { userId }, select: { id: true, name: true } })).map((entry) => [entry.id, entry.name]),
  );
  const clientOfGrant = new Map(grants.map((grant) => [grant.id, grant.clientId]));
  const byClient = new Map<string, ConnectedClient>();
  for (const grant of grants) {
    const active = grant.status === "active" && grant.client.status === "active";
    const existing = byClient.get(grant.clientId);
    if (existing) {
      // Several approvals of one client: the newest describes it; any active one keeps it active.
      if (active) existing.status = "active";
      existing.lastUsedAt = [existing.lastUsedAt, grant.lastUsedAt].reduce((a, b) => (a && b ? (a > b ? a : b) : (a ?? b)), null);
      continue;
    }
    byClient.set(grant.clientId, {
      clientId: grant.clientId,
      grantId: grant.id,
      kind: grant.client.kind as ConnectedClient["kind"],
      name: grant.client.name,
      status: active ? "active" : "revoked",
      redirectHosts: [...new Set(redirectUrisOf(grant.client).map((uri) => new URL(uri).host))],
      metadataHost: metadataDocumentHost(grant.client),
      keyHint: grant.client.keyHint,
      connectedAt: grant.createdAt,
      lastUsedAt: grant.lastUsedAt,
      staysConnected: grant.scope.split(" ").includes("offline_access"),
      credentials: await Promise.all(
        grant.credentials.map(async (entry) => ({
          ...entry.credential,
          mode: entry.mode,
          limits: active && entry.mode !== "read" ? await policyStanding(grant.id, entry.credentialId, now) : null,
        })),
      ),
      allowances: allowances
        .filter((allowance) => allowance.grantId && clientOfGrant.get(allowance.grantId) === grant.clientId)
        .map((allowance) => {
          const chain = chainById(allowance.chainId);
          return {
            ...allowance,
            walletName: walletNames.get(allowance.credentialId) ?? "A removed wallet",
            chainName: chain.name,
            explorerUrl: chain.explorerUrl ?? null,
          };
        }),
    });
  }
  return [...byClient.values()];
}

/**
 * The person ends a client's access: for an OAuth client their grants to it
 * (other people's grants to the same registration are theirs to keep); for a
 * personal API key the key itself. Tokens and keys stop on their next call. Returns the allowances it stopped, whose
 * revocations the caller sends.
 */
export async function revokeForUser(userId: string, clientId: string, clock: Clock = systemClock): Promise<Stopped> {
  const client = await db().client.findUnique({ where: { id: clientId } });
  const owns = client && (client.kind === "api_key" ? client.userId === userId : await db().grant.count({ where: { clientId, userId } }));
  if (!client || !owns) throw new NotFoundError("The client");
  const now = clock();
  const reason = "You revoked this client's access";
  // One transaction: the access ends, its pending requests leave the person's queue, and the log says so.
  return db().$transaction(async (tx) => {
    let revoked: number;
    if (client.kind === "api_key") {
      revoked = (
        await tx.client.updateMany({
          where: { id: clientId, status: "active" },
          data: { status: "revoked", revokedAt: now, revokedWhy: "user" },
        })
      ).count;
      await tx.grant.updateMany({ where: { clientId, status: "active" }, data: { status: "revoked", revokedAt: now } });
    } else {
      revoked = (await tx.grant.updateMany({ where: { clientId, userId, status: "active" }, data: { status: "revoked", revokedAt: now } }))
        .count;
    }
    const cancelled = await cancelPendingIn(tx, { clientId, userId }, reason, now);
    // Its allowances stop here at once; their disabling on chain follows once this commits.
    const stopped = await stopAllowancesIn(tx, { clientId, userId }, "you revoked its client");
    const events: AuditInput[] = [];
    if (revoked) {
      events.push(
        client.kind === "api_key"
          ? { type: "api_key.revoked", userId, clientId, data: { name: client.name } }
          : { type: "grant.revoked", userId, clientId, data: { name: client.name, grants: revoked } },
      );
    }
    await recordAuditIn(tx, [...events, ...cancellationEvents(cancelled, reason), ...stopped.events], clock);
    return stopped;
  });
}

/**
 * Revokes the client (its allowances stop here at once, in the same transaction), then relays the disabling of its
 * allowances: what was signed in this ceremony, and what was stored with the others. A disabling the chain does not
 * confirm leaves them stopped, and /clients offers to send or sign again.
 */
export async function revokeClientForUser(
  userId: string,
  clientId: string,
  input: { assertion?: AuthenticationResponseJSON; revocations: SignedRevocation[] },
) {
  // The revocations signed in this ceremony disable this client's allowances only: the body is the browser's to shape.
  const grants = await db().grant.findMany({ where: { clientId, userId }, select: { id: true, status: true } });
  const own = await db().allowance.findMany({ where: { userId, grantId: { in: grants.map((grant) => grant.id) } }, select: { id: true } });
  const owned = new Set(own.map((allowance) => allowance.id));
  if (input.revocations.some((revocation) => revocation.allowanceIds.some((id) => !owned.has(id))))
    throw new AllowanceError("A revocation sent with this client's names an allowance that is not this client's.");
  // Revoking a client relays its allowances' disabling once; afterwards each allowance is revoked on its own.
  if (input.revocations.length && !grants.some((grant) => grant.status === "active"))
    throw new AllowanceError("This client is already revoked: revoke its allowances one by one on Clients.", 409);
  await requireStepUp(userId, guarded.revokeClient(clientId), input.assertion);
  const stopped = await revokeForUser(userId, clientId);
  // one failure does not keep the others from being sent
  const failures: unknown[] = [];
  for (const revocation of input.revocations) {
    await revokeAllowances(userId, revocation.allowanceIds, { nonce: revocation.nonce, signature: revocation.signature as Hex }).catch(
      (error: unknown) => failures.push(error),
    );
  }
  await sendStoredRevocations(stopped.allowanceIds).catch((error: unknown) => failures.push(error));
  if (failures.length) throw failures[0];
}
