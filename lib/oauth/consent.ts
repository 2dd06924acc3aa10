import { db, type Tx } from "@/lib/db";
import { config } from "@/lib/config";
import { recordAudit } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { AppError } from "@/lib/http/errors";
import { mintAuthorizationCode } from "./authorization-code";
import { redirectWith } from "./authorize";
import { createGrant, describeGrantSet, grantSetSchema, type GrantSet } from "./grants";
import { formatScope } from "./scope";
import { metadataDocumentHost } from "./client-metadata-document";
import { deviceDecidedLocation } from "./device-authorization";
import { auditAllowanceCreated, storeAllowance, type ReadyAllowance } from "@/lib/allowances/allowances";

export class ConsentRequestError extends AppError {}

/** The pending authorization request as the consent screen shows it. */
export async function loadAuthorizationRequest(requestId: string, clock: Clock = systemClock) {
  const request = await db().authorizationRequest.findUnique({ where: { id: requestId } });
  if (!request) throw new ConsentRequestError("request_not_found", "This authorization request does not exist.", 404);
  const client = await db().client.findUniqueOrThrow({ where: { id: request.clientId } });
  const status = request.outcome ?? (request.expiresAt <= clock() ? "expired" : client.status !== "active" ? "client_revoked" : "pending");
  return {
    id: request.id,
    status: status as "pending" | "approved" | "denied" | "expired" | "client_revoked",
    clientName: client.name,
    /** null for a device's request (RFC 8628): the answer goes to the device that showed the code */
    redirectHost: request.redirectUri ? new URL(request.redirectUri).host : null,
    metadataHost: metadataDocumentHost(client),
    scopes: request.scope.split(" "),
    expiresAt: request.expiresAt,
  };
}

/**
 * Marks a pending request decided, atomically: of two concurrent decisions on
 * the same request exactly one gets it.
 */
async function claimRequest(tx: Tx, requestId: string, outcome: "approved" | "denied", now: Date) {
  const claimed = await tx.authorizationRequest.updateMany({
    where: { id: requestId, outcome: null, expiresAt: { gt: now } },
    data: { outcome, decidedAt: now },
  });
  const request = await tx.authorizationRequest.findUnique({ where: { id: requestId } });
  if (!request) throw new ConsentRequestError("request_not_found", "This authorization request does not exist.", 404);
  if (claimed.count === 0) {
    if (request.outcome) throw new ConsentRequestError("request_decided", "This authorization request was already decided.", 409);
    throw new ConsentRequestError("request_expired", "This authorization request expired. Start again from the application.", 410);
  }
  const client = await tx.client.findUniqueOrThrow({ where: { id: request.clientId } });
  if (client.status !== "active") throw new ConsentRequestError("client_revoked", "This application's access was revoked.", 409);
  return request;
}

export type ConsentRedirect = { location: string };

/**
 * The person approved the request with this grant set: records the grant,
 * issues a single-use code and returns the redirect carrying code, state and iss.
 * `stayConnected` false drops `offline_access`, so no refresh token is issued.
 */
export async function approveAuthorizationRequest(
  input: { requestId: string; userId: string; credentials: GrantSet; stayConnected: boolean; allowance?: ReadyAllowance },
  clock: Clock = systemClock,
): Promise<ConsentRedirect & { grantId: string; clientId: string }> {
  const grantSet = grantSetSchema.safeParse(input.credentials);
  if (!grantSet.success) {
    throw new ConsentRequestError(
      "invalid_grant_set",
      `The grant set is invalid: ${grantSet.error.issues[0]?.message ?? "malformed"}`,
      400,
    );
  }
  const credentials = grantSet.data;
  const now = clock();
  const result = await db().$transaction(async (tx) => {
    const request = await claimRequest(tx, input.requestId, "approved", now);
    const scopes = request.scope.split(" ").filter((scope) => scope !== "offline_access" || input.stayConnected);
    const scope = formatScope(scopes);
    const grantId = await createGrant(tx, { userId: input.userId, clientId: request.clientId, scope, credentials, now });
    const allowanceId = input.allowance ? await storeAllowance(tx, input.allowance, grantId) : null;
    const { id, clientId, redirectUri, codeChallenge } = request;
    if (redirectUri === null || codeChallenge === null) {
      // A device's request: its next poll finds the grant here (lib/oauth/device-authorization.ts).
      await tx.authorizationRequest.update({ where: { id }, data: { grantId } });
      return { request, grantId, allowanceId, scope, location: deviceDecidedLocation(id) };
    }
    const code = await mintAuthorizationCode(tx, { grantId, clientId, redirectUri, codeChallenge, scope, now });
    return {
      request,
      grantId,
      allowanceId,
      scope,
      location: redirectWith(redirectUri, { code, state: request.state, iss: config().baseUrl }),
    };
  });
  await recordAudit(
    {
      type: "grant.approved",
      userId: input.userId,
      clientId: result.request.clientId,
      data: { grant: result.grantId, scope: result.scope, credentials: describeGrantSet(credentials) },
    },
    clock,
  );
  if (input.allowance && result.allowanceId) await auditAllowanceCreated(input.allowance, result.allowanceId, result.grantId, clock);
  return {
    grantId: result.grantId,
    clientId: result.request.clientId,
    location: result.location,
  };
}

/** The person declined: the client learns `access_denied` on its redirect URI. */
export async function denyAuthorizationRequest(
  input: { requestId: string; userId: string },
  clock: Clock = systemClock,
): Promise<ConsentRedirect> {
  const now = clock();
  const request = await db().$transaction((tx) => claimRequest(tx, input.requestId, "denied", now));
  await recordAudit({ type: "grant.denied", userId: input.userId, clientId: request.clientId }, clock);
  // A device learns `access_denied` on its next poll.
  if (request.redirectUri === null) return { location: deviceDecidedLocation(request.id) };
  return {
    location: redirectWith(request.redirectUri, {
      error: "access_denied",
      error_description: "The user denied the request",
      state: request.state,
      iss: config().baseUrl,
    }),
  };
}
