import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import fc from "fast-check";
import { verifyAuthenticationResponse, type AuthenticationResponseJSON, type WebAuthnCredential } from "@simplewebauthn/server";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import { verifiedAssertion, type AssertionExpectations } from "./assertion";

const ORIGIN = "https://wallet.example";
const RP_ID = "wallet.example";
/** P-256's group order: ECDSA's s and its negation n - s both verify. */
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

type Authenticator = { privateKey: KeyObject; cose: Uint8Array };

function es256Authenticator(): Authenticator {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const { x, y } = publicKey.export({ format: "jwk" });
  const coseKey = new Map<number, number | Uint8Array>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, Buffer.from(x!, "base64url")],
    [-3, Buffer.from(y!, "base64url")],
  ]);
  return { privateKey, cose: new Uint8Array(isoCBOR.encode(coseKey as never)) };
}

function ed25519Authenticator(): Authenticator {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const { x } = publicKey.export({ format: "jwk" });
  const coseKey = new Map<number, number | Uint8Array>([
    [1, 1],
    [3, -8],
    [-1, 6],
    [-2, Buffer.from(x!, "base64url")],
  ]);
  return { privateKey, cose: new Uint8Array(isoCBOR.encode(coseKey as never)) };
}

// A few keys, and passkey ids shared between them: a remembered key must never answer for another key under one id.
const authenticators = [es256Authenticator(), es256Authenticator(), es256Authenticator()];
const edAuthenticator = ed25519Authenticator();
const ids = ["cred-a", "cred-b"];

/** DER INTEGER of a non-negative value, minimal unless `pad` leading zero bytes are added. */
function derInteger(value: bigint, pad = 0): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, "hex");
  if (bytes[0] & 0x80) bytes = Buffer.concat([Buffer.of(0), bytes]);
  bytes = Buffer.concat([Buffer.alloc(pad), bytes]);
  return Buffer.concat([Buffer.of(0x02, bytes.length), bytes]);
}

function derSignature(r: bigint, s: bigint, options: { pad?: number; longLength?: boolean } = {}): Buffer {
  const body = Buffer.concat([derInteger(r, options.pad), derInteger(s)]);
  const length = options.longLength ? Buffer.of(0x81, body.length) : Buffer.of(body.length);
  return Buffer.concat([Buffer.of(0x30), length, body]);
}

function rs(signature: Buffer): [bigint, bigint] {
  const raw = Buffer.from(signature);
  const rLength = raw[3];
  const r = BigInt(`0x${raw.subarray(4, 4 + rLength).toString("hex")}`);
  const s = BigInt(`0x${raw.subarray(6 + rLength).toString("hex")}`);
  return [r, s];
}

/** How a signed assertion is bent after signing (or, for the key and expectations, what it is checked against). */
const mutations = [
  "none",
  "flip a signature bit",
  "append a signature byte",
  "truncate the signature",
  "signature as raw r||s",
  "high s",
  "r padded with a zero byte (BER)",
  "long-form length (BER)",
  "flip an authenticator data bit",
  "flip a client data bit",
  "wrong key",
  "wrong challenge",
  "wrong origin",
  "wrong RP ID",
  "id differs from rawId",
  "type not public-key",
  "authenticator data not base64url",
  "signature not base64url",
  "userHandle not a string",
  "clientDataJSON not a string",
  "random signature bytes",
] as const;

/** Mostly `valid`, sometimes one of `others`: so that most cases get past the first checks to the later ones. */
const mostly = <T>(valid: T, ...others: T[]) =>
  fc.oneof({ weight: 6, arbitrary: fc.constant(valid) }, { weight: 1, arbitrary: fc.constantFrom(...others) });

const clientDataExtras = fc.record(
  {
    type: mostly("webauthn.get", "webauthn.create", "payment.get"),
    crossOrigin: mostly<boolean | string | undefined>(false, undefined, true, "yes"),
    topOrigin: mostly<string | undefined>(undefined, "", ORIGIN, "https://evil.example"),
    tokenBinding: mostly<unknown>(undefined, null, { status: "present" }, { status: "bogus" }, "present", [], {}),
    origin: mostly(ORIGIN, "https://evil.example", `${ORIGIN}/`),
  },
  { requiredKeys: ["type", "origin"] },
);

const assertionCase = fc
  .record({
    signer: fc.nat({ max: authenticators.length - 1 }),
    id: fc.constantFrom(...ids),
    challenge: fc.uint8Array({ minLength: 16, maxLength: 32 }).map(b64url),
    clientData: clientDataExtras,
    rpId: mostly(RP_ID, "evil.example"),
    // UP and UV, with or without BE and BS, or any byte: AT and ED without their data make the authenticator data
    // malformed.
    flags: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(0x05, 0x0d, 0x1d) }, fc.integer({ min: 0, max: 255 })),
    storedCounter: fc.oneof(fc.constant(0), fc.nat({ max: 10 }), fc.nat({ max: 2 ** 32 - 2 })),
    counterStep: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }, fc.integer({ min: -3, max: 0 })),
    mutation: fc.oneof({ weight: 3, arbitrary: fc.constant("none" as const) }, fc.constantFrom(...mutations)),
    position: fc.nat(),
    noise: fc.uint8Array({ minLength: 0, maxLength: 80 }),
  })
  .map(({ counterStep, ...input }) => ({ ...input, counter: Math.min(2 ** 32 - 1, Math.max(0, input.storedCounter + counterStep)) }));

type Case = typeof assertionCase extends fc.Arbitrary<infer T> ? T : never;

function built(input: Case, authenticator: Authenticator) {
  const { type, ...rest } = input.clientData;
  const clientDataJSON = Buffer.from(JSON.stringify({ type, challenge: input.challenge, ...rest }), "utf8");
  const counter = Buffer.alloc(4);
  counter.writeUInt32BE(input.counter);
  let authenticatorData: Buffer = Buffer.concat([sha256(input.rpId), Buffer.of(input.flags), counter]);
  let clientData: Buffer = clientDataJSON;
  const digest = authenticator === edAuthenticator ? null : "sha256";
  let signature: Buffer = sign(digest, Buffer.concat([authenticatorData, sha256(clientDataJSON)]), authenticator.privateKey);
  const flip = (bytes: Buffer) => {
    const copy = Buffer.from(bytes);
    copy[input.position % copy.length] ^= 1 << (input.position % 8);
    return copy;
  };
  const [r, s] = authenticator === edAuthenticator ? [0n, 0n] : rs(signature);
  switch (input.mutation) {
    case "flip a signature bit":
      signature = flip(signature);
      break;
    case "append a signature byte":
      signature = Buffer.concat([signature, Buffer.of(input.position % 256)]);
      break;
    case "truncate the signature":
      signature = signature.subarray(0, input.position % signature.length);
      break;
    case "signature as raw r||s":
      signature = Buffer.from(r.toString(16).padStart(64, "0") + s.toString(16).padStart(64, "0"), "hex");
      break;
    case "high s":
      signature = derSignature(r, N - s);
      break;
    case "r padded with a zero byte (BER)":
      signature = derSignature(r, s, { pad: 1 });
      break;
    case "long-form length (BER)":
      signature = derSignature(r, s, { longLength: true });
      break;
    case "flip an authenticator data bit":
      authenticatorData = flip(authenticatorData);
      break;
    case "flip a client data bit":
      clientData = flip(clientDataJSON);
      break;
    case "random signature bytes":
      signature = Buffer.from(input.noise);
      break;
  }
  const response: AuthenticationResponseJSON = {
    id: input.id,
    rawId: input.mutation === "id differs from rawId" ? `${input.id}x` : input.id,
    type: (input.mutation === "type not public-key" ? "password" : "public-key") as "public-key",
    response: {
      clientDataJSON: input.mutation === "clientDataJSON not a string" ? (7 as never) : b64url(clientData),
      authenticatorData: b64url(authenticatorData) + (input.mutation === "authenticator data not base64url" ? "!" : ""),
      signature: b64url(signature) + (input.mutation === "signature not base64url" ? "*" : ""),
      userHandle: input.mutation === "userHandle not a string" ? ({} as never) : "dXNlcg",
    },
    clientExtensionResults: {},
  };
  const expected: AssertionExpectations = {
    expectedChallenge: input.mutation === "wrong challenge" ? `${input.challenge}A` : input.challenge,
    expectedOrigin: input.mutation === "wrong origin" ? "https://other.example" : ORIGIN,
    expectedRPID: input.mutation === "wrong RP ID" ? "other.example" : RP_ID,
  };
  const key = input.mutation === "wrong key" ? authenticators[(input.signer + 1) % authenticators.length] : authenticator;
  const credential: WebAuthnCredential = {
    id: input.id,
    publicKey: key.cose as WebAuthnCredential["publicKey"],
    counter: input.storedCounter,
  };
  return { response, expected, credential };
}

/** What an approval sees: accepted with its new counter, refused with the library's message, or not verified. */
async function verdict(check: () => Promise<{ verified: boolean; newCounter: number }>): Promise<string> {
  try {
    const { verified, newCounter } = await check();
    return verified ? `accepted, counter ${newCounter}` : "not verified";
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

async function sameVerdict({ response, expected, credential }: ReturnType<typeof built>): Promise<string> {
  const reference = await verdict(async () => {
    const verification = await verifyAuthenticationResponse({ response, ...expected, credential, requireUserVerification: true });
    return { verified: verification.verified, newCounter: verification.authenticationInfo.newCounter };
  });
  assert.equal(await verdict(() => verifiedAssertion(response, expected, credential)), reference);
  return reference;
}

describe("an assertion's check without WebCrypto (SimpleWebAuthn's verdict on every input)", () => {
  it("accepts what the library accepts, with its counter, for random valid ES256 assertions", async () => {
    await fc.assert(
      fc.asyncProperty(assertionCase, async (input) => {
        const valid: Case = {
          ...input,
          clientData: { type: "webauthn.get", origin: ORIGIN, crossOrigin: false },
          rpId: RP_ID,
          flags: 0x05,
          counter: input.storedCounter + 1,
          mutation: "none",
        };
        assert.equal(await sameVerdict(built(valid, authenticators[input.signer])), `accepted, counter ${valid.counter}`);
      }),
      { numRuns: 150 },
    );
  });

  it("gives the library's verdict and message on mutated assertions, field by field", async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(assertionCase, async (input) => {
        const outcome = await sameVerdict(built(input, authenticators[input.signer]));
        const kind = outcome.startsWith("refused") ? "refused" : outcome.startsWith("accepted") ? "accepted" : outcome;
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
      }),
      { numRuns: 1500 },
    );
    // Every kind of verdict must have been exercised for the comparison to mean anything.
    for (const kind of ["accepted", "refused", "not verified"]) assert.ok(seen.get(kind), `no ${kind} verdict in ${[...seen]}`);
  });

  it("gives the library's verdict on each mutation of a valid assertion, and accepts BER signatures as the library does", async () => {
    const base: Case = {
      signer: 0,
      id: ids[0],
      challenge: b64url("challenge-of-thirty-two-bytes!!!"),
      clientData: { type: "webauthn.get", origin: ORIGIN, crossOrigin: false },
      rpId: RP_ID,
      flags: 0x05,
      counter: 8,
      storedCounter: 7,
      mutation: "none",
      position: 77,
      noise: new Uint8Array(70),
    };
    const outcomes: Record<string, string> = {};
    for (const mutation of mutations) outcomes[mutation] = await sameVerdict(built({ ...base, mutation }, authenticators[0]));
    const accepted = Object.keys(outcomes).filter((mutation) => outcomes[mutation].startsWith("accepted"));
    // A high s verifies in ECDSA; the library's ASN.1 reader takes what OpenSSL's strict DER refuses (a byte after the
    // sequence, a long-form length), and so does this.
    assert.deepEqual(accepted, ["none", "append a signature byte", "high s", "long-form length (BER)"]);
  });

  it("leaves a key other than ES256 to the library", async () => {
    const input: Case = {
      signer: 0,
      id: "cred-ed",
      challenge: b64url("ed25519"),
      clientData: { type: "webauthn.get", origin: ORIGIN },
      rpId: RP_ID,
      flags: 0x05,
      counter: 3,
      storedCounter: 2,
      mutation: "none",
      position: 0,
      noise: new Uint8Array(),
    };
    assert.equal(await sameVerdict(built(input, edAuthenticator)), "accepted, counter 3");
    assert.match(await sameVerdict(built({ ...input, mutation: "flip a signature bit" }, edAuthenticator)), /not verified|refused/);
  });
});
