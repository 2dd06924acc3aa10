// The pure checks of a DPoP proof (RFC 9449 §4.3), against proofs the SDK makes and proofs made wrong on purpose.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";
import { dpopProof, dpopSigner, generateDpopJwk } from "agent-wallet/sdk";
import { checkDpopProof, singleProof } from "./dpop-proof";
import { InvalidDpopProofError } from "./errors";

const HTU = "https://wallet.example/mcp";
const TARGET = { htm: "POST", htu: HTU };
const now = () => new Date();
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

async function refusal(proof: string, target: Parameters<typeof checkDpopProof>[1] = TARGET, clock = now): Promise<string> {
  const error = await checkDpopProof(proof, target, clock).then(
    () => assert.fail("the proof was accepted"),
    (refused: unknown) => refused,
  );
  assert.ok(error instanceof InvalidDpopProofError, String(error));
  assert.equal(error.code, "invalid_dpop_proof");
  return error.message;
}

/** A proof signed with jose, with any header and claims, for the cases the SDK never makes. */
async function handMade(options: { header?: Record<string, unknown>; claims?: Record<string, unknown>; alg?: string } = {}) {
  const alg = options.alg ?? "ES256";
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const claims = { jti: crypto.randomUUID(), htm: "POST", htu: HTU, iat: Math.floor(Date.now() / 1000), ...options.claims };
  const proof = await new SignJWT(claims).setProtectedHeader({ alg, typ: "dpop+jwt", jwk, ...options.header } as never).sign(privateKey);
  return { proof, jwk, privateKey };
}

describe("checkDpopProof", () => {
  it("accepts the SDK's ES256 proof and answers the key's RFC 7638 thumbprint; a query or fragment in htu does not count", async () => {
    const jwk = await generateDpopJwk();
    const signer = await dpopSigner(jwk);
    const checked = await checkDpopProof(await dpopProof(signer, "POST", `${HTU}?x=1#y`), TARGET, now);
    assert.equal(checked.jkt, await calculateJwkThumbprint(signer.publicJwk as JWK));
    assert.ok(checked.jti.length >= 16);
    assert.equal("d" in signer.publicJwk, false, "a proof carries the public key only");
  });

  it("accepts EdDSA and RS256 proofs, the SDK's from a CryptoKeyPair", async () => {
    for (const algorithm of [
      { name: "Ed25519" },
      { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    ]) {
      const pair = (await crypto.subtle.generateKey(algorithm, false, ["sign", "verify"])) as CryptoKeyPair;
      await checkDpopProof(await dpopProof(await dpopSigner(pair), "POST", HTU), TARGET, now);
    }
  });

  it("at a resource, requires the ath of the access token sent with it", async () => {
    const signer = await dpopSigner(await generateDpopJwk());
    await checkDpopProof(await dpopProof(signer, "POST", HTU, "token-1"), { ...TARGET, accessToken: "token-1" }, now);
    assert.match(await refusal(await dpopProof(signer, "POST", HTU, "token-2"), { ...TARGET, accessToken: "token-1" }), /ath/);
    assert.match(await refusal(await dpopProof(signer, "POST", HTU), { ...TARGET, accessToken: "token-1" }), /ath/);
  });

  it("refuses another method or URL, a stale or future iat, and a proof without jti", async () => {
    const signer = await dpopSigner(await generateDpopJwk());
    assert.match(await refusal(await dpopProof(signer, "GET", HTU)), /htm/);
    assert.match(await refusal(await dpopProof(signer, "POST", "https://wallet.example/oauth/token")), /htu/);
    assert.match(await refusal(await dpopProof(signer, "POST", "https://other.example/mcp")), /htu/);
    const proof = await dpopProof(signer, "POST", HTU);
    assert.match(await refusal(proof, TARGET, () => new Date(Date.now() + 61_000)), /iat/);
    assert.match(await refusal(proof, TARGET, () => new Date(Date.now() - 11_000)), /iat/);
    assert.match(await refusal((await handMade({ claims: { jti: undefined } })).proof), /jti/);
  });

  it("refuses alg none, a MAC, a private key in the jwk, another typ, no jwk, and a signature by another key", async () => {
    const { jwk } = await handMade();
    const claims = { jti: "j", htm: "POST", htu: HTU, iat: Math.floor(Date.now() / 1000) };
    const unsigned = `${b64({ alg: "none", typ: "dpop+jwt", jwk })}.${b64(claims)}.`;
    assert.match(await refusal(unsigned), /alg must be one of ES256, EdDSA, RS256/);
    const mac = `${b64({ alg: "HS256", typ: "dpop+jwt", jwk: { kty: "oct", k: "c2VjcmV0" } })}.${b64({ jti: "j" })}.c2ln`;
    assert.match(await refusal(mac), /alg must be/);

    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    const withPrivate = await new SignJWT({ jti: "j", htm: "POST", htu: HTU, iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: privateJwk as never })
      .sign(privateKey);
    assert.match(await refusal(withPrivate), /public key, without its private part/);

    assert.match(await refusal((await handMade({ header: { typ: "JWT" } })).proof), /typ must be dpop\+jwt/);
    assert.match(await refusal((await handMade({ header: { jwk: undefined } })).proof), /no jwk/);
    const other = await handMade();
    const [header, payload] = (await handMade()).proof.split(".");
    assert.match(await refusal(`${header}.${payload}.${other.proof.split(".")[2]}`), /signature does not verify/);
    assert.match(await refusal("not a jws"), /not a JWS/);
  });
});

describe("singleProof", () => {
  it("takes one DPoP header; several (joined by commas), an empty or an oversized one are refused", () => {
    assert.equal(singleProof(null), null);
    assert.equal(singleProof(" a.b.c "), "a.b.c");
    assert.throws(() => singleProof("a.b.c, d.e.f"), InvalidDpopProofError);
    assert.throws(() => singleProof(" "), InvalidDpopProofError);
    assert.throws(() => singleProof("a".repeat(5000)), InvalidDpopProofError);
    assert.equal(
      (() => {
        try {
          singleProof("a,b", 401);
        } catch (error) {
          return (error as InvalidDpopProofError).status;
        }
      })(),
      401,
    );
  });
});
