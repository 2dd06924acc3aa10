// A software WebAuthn authenticator for tests, built on node:crypto only. It
// holds one P-256 (ES256) credential and answers registration and assertion
// challenges with the JSON that @simplewebauthn/browser posts, attestation
// "none". Origin, RP ID, flags and signature counter can be overridden per
// response, so tests can forge a phishing origin, a wrong RP, a missing user
// verification or a cloned authenticator replaying an old counter.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";

/** Authenticator data flags (WebAuthn §6.1). */
export const FLAGS = { UP: 0x01, UV: 0x04, AT: 0x40, ED: 0x80 } as const;

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

// --- a minimal CBOR encoder: unsigned and negative integers, byte and text strings, maps ---

type CborValue = number | string | Uint8Array | Map<CborValue, CborValue>;

function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) {
    const head = Buffer.alloc(3);
    head[0] = (major << 5) | 25;
    head.writeUInt16BE(length, 1);
    return head;
  }
  const head = Buffer.alloc(5);
  head[0] = (major << 5) | 26;
  head.writeUInt32BE(length, 1);
  return head;
}

function cbor(value: CborValue): Buffer {
  if (typeof value === "number") {
    if (!Number.isInteger(value)) throw new Error("cbor: only integers");
    return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  }
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8");
    return Buffer.concat([cborHead(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), value]);
  const parts = [cborHead(5, value.size)];
  for (const [key, inner] of value) parts.push(cbor(key), cbor(inner));
  return Buffer.concat(parts);
}

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value >>> 0);
  return bytes;
}

export type ResponseOverrides = {
  /** clientDataJSON origin (default: the authenticator's origin) */
  origin?: string;
  /** the RP ID whose hash goes into authenticatorData (default: the authenticator's RP ID) */
  rpId?: string;
  /** authenticatorData flags (default UP|UV, plus AT at registration) */
  flags?: number;
  /** signature counter; by default the authenticator increments its own */
  counter?: number;
  /** clientDataJSON type (default webauthn.create / webauthn.get) */
  type?: string;
};

export class SoftAuthenticator {
  readonly rpId: string;
  readonly origin: string;
  readonly credentialId: Buffer;
  readonly id: string;
  /** the signature counter the next ordinary assertion will exceed */
  counter = 0;
  /** whether the registration reports the PRF extension as enabled */
  prf: boolean;
  userHandle: string | null = null;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  constructor(options: { origin: string; rpId?: string; prf?: boolean }) {
    this.origin = new URL(options.origin).origin;
    this.rpId = options.rpId ?? new URL(options.origin).hostname;
    this.prf = options.prf ?? true;
    this.credentialId = randomBytes(32);
    this.id = b64url(this.credentialId);
    const pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  /** The credential public key as a COSE EC2 key: {1: 2 (EC2), 3: -7 (ES256), -1: 1 (P-256), -2: x, -3: y}. */
  cosePublicKey(): Buffer {
    const jwk = this.publicKey.export({ format: "jwk" });
    return cbor(
      new Map<CborValue, CborValue>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, "base64url")],
        [-3, Buffer.from(jwk.y!, "base64url")],
      ]),
    );
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), "utf8");
  }

  /**
   * Answers registration options (as generateRegistrationOptions returns them)
   * the way navigator.credentials.create() and @simplewebauthn/browser would.
   */
  register(options: { challenge: string; user?: { id: string } }, overrides: ResponseOverrides = {}): RegistrationResponseJSON {
    if (options.user?.id) this.userHandle = options.user.id;
    const counter = overrides.counter ?? this.counter;
    const clientDataJSON = this.clientData(overrides.type ?? "webauthn.create", options.challenge, overrides.origin ?? this.origin);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      sha256(overrides.rpId ?? this.rpId),
      Buffer.from([overrides.flags ?? FLAGS.UP | FLAGS.UV | FLAGS.AT]),
      uint32(counter),
      Buffer.alloc(16), // AAGUID: zeros, as with attestation "none"
      idLength,
      this.credentialId,
      this.cosePublicKey(),
    ]);
    const attestationObject = cbor(
      new Map<CborValue, CborValue>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ["internal"] },
      clientExtensionResults: (this.prf ? { prf: { enabled: true } } : {}) as RegistrationResponseJSON["clientExtensionResults"],
    };
  }

  /**
   * Answers an assertion challenge (navigator.credentials.get()). Without a
   * counter override the authenticator's counter goes up by one.
   */
  assert(options: { challenge: string }, overrides: ResponseOverrides = {}): AuthenticationResponseJSON {
    let counter: number;
    if (overrides.counter === undefined) counter = ++this.counter;
    else counter = overrides.counter;
    const clientDataJSON = this.clientData(overrides.type ?? "webauthn.get", options.challenge, overrides.origin ?? this.origin);
    const authenticatorData = Buffer.concat([
      sha256(overrides.rpId ?? this.rpId),
      Buffer.from([overrides.flags ?? FLAGS.UP | FLAGS.UV]),
      uint32(counter),
    ]);
    const signature = sign("sha256", Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.privateKey); // DER ECDSA
    return {
      id: this.id,
      rawId: this.id,
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
        userHandle: this.userHandle ?? undefined,
      },
      clientExtensionResults: {},
    };
  }
}

/** A copy of an assertion whose signature has one bit flipped. */
export function tamperSignature(response: AuthenticationResponseJSON): AuthenticationResponseJSON {
  const signature = Buffer.from(response.response.signature, "base64url");
  signature[signature.length - 1] ^= 0x01;
  return { ...response, response: { ...response.response, signature: b64url(signature) } };
}
