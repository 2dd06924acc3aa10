import { db } from "@/lib/db";
import { recordAuditIn } from "@/lib/audit";
import { sha256Hex } from "@/lib/crypto";
import { systemClock, type Clock } from "@/lib/clock";
import { cancellationEvents, cancelPendingIn } from "@/lib/wallet/request-lifecycle";
import { disableInBackground, stopAllowancesIn } from "@/lib/allowances/stop";
import { verifyAccessToken } from "./access-token";
import { InvalidGrantError, InvalidTokenError } from "./errors";
import { authenticateClient, formParam } from "./form";

type PresentedToken = { grantId: string; clientId: string; presented: "access_token" | "refresh_token" };

/**
 * The grant a token stands for, or null when it is not a live token of this service: an access token
 * (a JWT) that verifies, or a current refresh token (unspent, unexpired). `token_type_hint` is not
 * needed: a token's form tells the two apart (RFC 7009 §2.1 lets the server search every type).
 */
async function presentedToken(token: string, clock: Clock): Promise<PresentedToken | null> {
  if (token.includes(".")) {
    try {
      const claims = await verifyAccessToken(token, clock);
      return { grantId: claims.grant_id, clientId: claims.client_id, presented: "access_token" };
    } catch (error) {
      if (error instanceof InvalidTokenError) return null;
      throw error;
    }
  }
  const stored = await db().refreshToken.findUnique({ where: { tokenHash: sha256Hex(token) } });
  if (!stored || stored.rotatedAt !== null || stored.expiresAt <= clock()) return null;
  return { grantId: stored.grantId, clientId: stored.clientId, presented: "refresh_token" };
}

/**
 * POST /oauth/revoke (RFC 7009). Revoking either token revokes the grant it belongs to: its refresh
 * chain and every access token of it stop, as when the person revokes it (docs/decisions/0006).
 * An unknown, expired or already revoked token changes nothing and is not an error.
 */
export async function revokeToken(form: URLSearchParams, clock: Clock = systemClock): Promise<void> {
  const clientId = await authenticateClient(form, clock);
  const token = formParam(form, "token")!;
  const found = await presentedToken(token, clock);
  if (!found) return;
  if (found.clientId !== clientId) throw new InvalidGrantError("The token was issued to another client");
  const grant = await db().grant.findUnique({ where: { id: found.grantId } });
  if (!grant) return;
  const now = clock();
  const reason = "The application ended its access";
  const stopped = await db().$transaction(async (tx) => {
    const { count } = await tx.grant.updateMany({ where: { id: grant.id, status: "active" }, data: { status: "revoked", revokedAt: now } });
    if (!count) return null;
    const cancelled = await cancelPendingIn(tx, { grantId: grant.id }, reason, now);
    const stopped = await stopAllowancesIn(tx, { grantId: grant.id }, "the application ended its access");
    await recordAuditIn(
      tx,
      [
        { type: "token.revoked", userId: grant.userId, clientId, data: { grant: grant.id, presented: found.presented } },
        ...cancellationEvents(cancelled, reason),
        ...stopped.events,
      ],
      clock,
    );
    return stopped;
  });
  disableInBackground(stopped);
}
