// RFC 8628, the device authorization grant: a terminal or headless agent gets a device code (its own secret) and
// a short user code for the person, who enters it at {app_url}/device and then decides on the same consent screen
// as the browser flow (lib/oauth/consent.ts). The request is an AuthorizationRequest without a redirect URI; the
// person's approval stores the grant on it, and the device's one successful poll turns it into tokens.
import { randomInt } from "node:crypto";
import { db } from "@/lib/db";
import { config } from "@/lib/config";
import { AppError } from "@/lib/http/errors";
import { randomSecret, sha256Hex } from "@/lib/crypto";
import { addSeconds, systemClock, type Clock } from "@/lib/clock";
import { requestedScope } from "./authorize";
import { findOAuthClient } from "./clients";
import {
  AccessDeniedError,
  DeviceAuthorizationPendingError,
  ExpiredTokenError,
  InvalidClientError,
  InvalidGrantError,
  SlowDownError,
  UnauthorizedClientError,
} from "./errors";
import { formParam } from "./form";
import { DEVICE_CODE_GRANT_TYPE, registeredGrantTypes } from "./registration";
import { checkResource } from "./resource";
import { activeGrant, type ActiveGrant } from "./single-use";

/** As long as a person has on the consent screen: the device code and its request expire together. */
const DEVICE_CODE_TTL_SECONDS = 10 * 60;
const POLL_INTERVAL_SECONDS = 5;
/** RFC 8628 §3.5: each slow_down adds 5 seconds to the interval, for good. */
const SLOW_DOWN_STEP_SECONDS = 5;

/** RFC 8628 §6.1: consonants only (no vowels, so no words; no 0/O or 1/I to confuse), 8 of them: 20^8 ≈ 2^34.6. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const USER_CODE_LENGTH = 8;

export type DeviceAuthorizationResponse = {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
};

/** A user code as people read it: XXXX-XXXX. */
function readable(userCode: string): string {
  return `${userCode.slice(0, 4)}-${userCode.slice(4)}`;
}

/** A fresh user code, as people read it. */
export function generateUserCode(): string {
  return readable(Array.from({ length: USER_CODE_LENGTH }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join(""));
}

/** What a person typed, as stored (upper case, without dashes or spaces), or null when it cannot be a user code. */
export function normalizeUserCode(typed: string): string | null {
  const code = typed.toUpperCase().replace(/[\s-]/g, "");
  if (code.length !== USER_CODE_LENGTH || [...code].some((char) => !USER_CODE_ALPHABET.includes(char))) return null;
  return code;
}

/** The person's page for a code, on the app origin: with the code in it for a link or a QR code. */
function verificationUri(userCode?: string): string {
  const url = new URL("/device", config().appUrl);
  if (userCode) url.searchParams.set("user_code", userCode);
  return url.toString();
}

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === "P2002";
}

/** POST /oauth/device_authorization: a public client that registered the device grant starts a sign-in. */
export async function startDeviceAuthorization(form: URLSearchParams, clock: Clock = systemClock): Promise<DeviceAuthorizationResponse> {
  const clientId = formParam(form, "client_id")!;
  const client = await findOAuthClient(clientId, clock);
  if (!client) throw new InvalidClientError();
  if (client.status !== "active") throw new InvalidClientError("This client was revoked; register again");
  if (!registeredGrantTypes(client).includes(DEVICE_CODE_GRANT_TYPE)) {
    throw new UnauthorizedClientError(`This client did not register the grant type ${DEVICE_CODE_GRANT_TYPE}`);
  }
  const scope = requestedScope(client, formParam(form, "scope", false));
  const resources = form.getAll("resource");
  checkResource(resources);
  const now = clock();
  const deviceCode = randomSecret(32);
  // A user code is short, so two live ones could collide (the hash is unique): draw again.
  for (let attempt = 1; ; attempt++) {
    const userCode = generateUserCode();
    try {
      await db().authorizationRequest.create({
        data: {
          id: randomSecret(24),
          clientId: client.id,
          scope,
          resource: resources[0] ?? null,
          createdAt: now,
          expiresAt: addSeconds(now, DEVICE_CODE_TTL_SECONDS),
          deviceCodeHash: sha256Hex(deviceCode),
          userCodeHash: sha256Hex(normalizeUserCode(userCode)!),
          pollInterval: POLL_INTERVAL_SECONDS,
          nextPollAt: now,
        },
      });
      return {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri(),
        verification_uri_complete: verificationUri(userCode),
        expires_in: DEVICE_CODE_TTL_SECONDS,
        interval: POLL_INTERVAL_SECONDS,
      };
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 3) throw error;
    }
  }
}

/**
 * The token endpoint's side of a device code (grant_type urn:ietf:params:oauth:grant-type:device_code): the
 * interval is enforced first (slow_down, and 5 s more from then on), then the person's decision is reported, and
 * an approved code is spent by one conditional UPDATE, so of any number of concurrent polls exactly one gets tokens.
 */
export async function claimDeviceCode(
  clientId: string,
  form: URLSearchParams,
  clock: Clock,
): Promise<{ grant: ActiveGrant; scope: string }> {
  const deviceCodeHash = sha256Hex(formParam(form, "device_code")!);
  const stored = await db().authorizationRequest.findUnique({ where: { deviceCodeHash } });
  if (!stored || stored.pollInterval === null) throw new InvalidGrantError("The device code is invalid");
  if (stored.clientId !== clientId) throw new InvalidGrantError("The device code was issued to another client");
  if (stored.tokensIssuedAt) throw new InvalidGrantError("The device code was already used");
  const now = clock();
  if (stored.expiresAt <= now) throw new ExpiredTokenError();
  const { count: onTime } = await db().authorizationRequest.updateMany({
    where: { id: stored.id, nextPollAt: { lte: now } },
    data: { nextPollAt: addSeconds(now, stored.pollInterval) },
  });
  if (!onTime) {
    const interval = stored.pollInterval + SLOW_DOWN_STEP_SECONDS;
    await db().authorizationRequest.updateMany({
      where: { id: stored.id },
      data: { pollInterval: { increment: SLOW_DOWN_STEP_SECONDS }, nextPollAt: addSeconds(now, interval) },
    });
    throw new SlowDownError(interval);
  }
  if (stored.outcome === null) throw new DeviceAuthorizationPendingError();
  if (stored.outcome === "denied") throw new AccessDeniedError("The person denied this device");
  const grant = await activeGrant(stored.grantId!);
  const { count } = await db().authorizationRequest.updateMany({
    where: { id: stored.id, tokensIssuedAt: null, expiresAt: { gt: now } },
    data: { tokensIssuedAt: now },
  });
  if (!count) throw new InvalidGrantError("The device code was already used");
  return { grant, scope: grant.scope };
}

class DeviceCodeError extends AppError {}

/**
 * The person typed a user code at /device: where they decide on it (the consent screen), if a device waits for
 * it. A request already decided or expired is refused; the caller's rate limit keeps guessing slow.
 */
export async function findDeviceRequest(typed: string, clock: Clock = systemClock): Promise<{ location: string }> {
  const userCode = normalizeUserCode(typed);
  if (!userCode) throw new DeviceCodeError("invalid_user_code", "A code is 8 letters, like BCDF-GHJK. Check it on your device.", 400);
  const request = await db().authorizationRequest.findUnique({ where: { userCodeHash: sha256Hex(userCode) } });
  if (!request || request.expiresAt <= clock()) {
    throw new DeviceCodeError("user_code_not_found", "No device is waiting for this code. Check it, or start again on your device.", 404);
  }
  if (request.outcome) throw new DeviceCodeError("user_code_used", "This code was already used. Start again on your device.", 409);
  const consent = new URL("/consent", config().appUrl);
  consent.searchParams.set("request", request.id);
  // The consent screen repeats it (once `userCodeOf` confirms it), for the person to check against the device.
  consent.searchParams.set("code", readable(userCode));
  return { location: consent.toString() };
}

/**
 * The user code of a device's request as people read it (XXXX-XXXX), when `typed` is that code: the consent screen
 * repeats only a code that belongs to its request, never one a link made up. null otherwise.
 */
export async function userCodeOf(requestId: string, typed: string | undefined): Promise<string | null> {
  const userCode = typed === undefined ? null : normalizeUserCode(typed);
  if (!userCode) return null;
  const request = await db().authorizationRequest.findUnique({ where: { id: requestId }, select: { userCodeHash: true } });
  return request?.userCodeHash === sha256Hex(userCode) ? readable(userCode) : null;
}

/** Where the person lands after deciding on a device's request: the page that says to return to the device. */
export function deviceDecidedLocation(requestId: string): string {
  const url = new URL("/device", config().appUrl);
  url.searchParams.set("request", requestId);
  return url.toString();
}
