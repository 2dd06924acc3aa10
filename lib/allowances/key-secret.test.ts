import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createCipheriv, hkdfSync, randomBytes } from "node:crypto";
import { ConfigError } from "@/lib/config";
import { keySecretsFrom, sealDelegateKey, unsealDelegateKey, type KeySecret } from "./key-secret";

const secret = () => randomBytes(32).toString("base64url");
const PRIVATE_KEY = `0x${"ab".repeat(32)}`;
const ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const POSTGRES = "postgresql://127.0.0.1:5432/agent_wallet";

/** How the delegate key was sealed before ALLOWANCE_KEY_SECRET took kids: what existing deployments store. */
function sealedBeforeKids(plain: string): string {
  const key = Buffer.from(hkdfSync("sha256", Buffer.from(plain), Buffer.alloc(0), "agent-wallet delegate key v1", 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(ADDRESS.toLowerCase()));
  const body = Buffer.concat([cipher.update(PRIVATE_KEY, "utf8"), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/** The ConfigError that `run` throws: it names ALLOWANCE_KEY_SECRET and none of `secrets`. */
function refusal(run: () => unknown, secrets: string[]): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.match(error.message, /\bALLOWANCE_KEY_SECRET\b/);
    for (const value of secrets) assert.ok(!error.message.includes(value), "no secret in the message");
    return error.message;
  }
  assert.fail("no ConfigError");
}

describe("ALLOWANCE_KEY_SECRET", () => {
  it("takes a plain secret, or kid:secret pairs in order (the first seals)", () => {
    const [a, b] = [secret(), secret()];
    assert.deepEqual(keySecretsFrom({ ALLOWANCE_KEY_SECRET: a }), [{ kid: null, secret: a }]);
    assert.deepEqual(keySecretsFrom({ ALLOWANCE_KEY_SECRET: ` k2:${b} , k1:${a} ` }), [
      { kid: "k2", secret: b },
      { kid: "k1", secret: a },
    ]);
  });

  it("takes standard base64 too, as openssl rand -base64 32 prints it, read as the same secret in base64url", () => {
    const bytes = Buffer.from("fb".repeat(8) + "ff".repeat(24), "hex");
    const [standard, url] = [bytes.toString("base64"), bytes.toString("base64url")];
    assert.match(standard, /[+/].*=$/);
    assert.deepEqual(keySecretsFrom({ ALLOWANCE_KEY_SECRET: standard }), [{ kid: null, secret: url }]);
    assert.deepEqual(keySecretsFrom({ ALLOWANCE_KEY_SECRET: `k1:${standard}` }), [{ kid: "k1", secret: url }]);
    assert.match(
      refusal(() => keySecretsFrom({ ALLOWANCE_KEY_SECRET: "A".repeat(42) + "*" }), []),
      /openssl rand -base64 32/,
    );
  });

  it("unset on SQLite: null (generated into the data folder); unset on PostgreSQL: refused, saying why", () => {
    assert.equal(keySecretsFrom({}), null);
    assert.equal(keySecretsFrom({ DATABASE_URL: "file:/tmp/agent-wallet.db", ALLOWANCE_KEY_SECRET: "" }), null);
    for (const unset of [{}, { ALLOWANCE_KEY_SECRET: "" }]) {
      const message = refusal(() => keySecretsFrom({ DATABASE_URL: POSTGRES, ...unset }), []);
      assert.match(message, /must be set on PostgreSQL/);
      assert.match(message, /every instance/);
    }
  });

  it("refuses a malformed value without repeating it", () => {
    const long = secret();
    for (const value of ["short", `k1:short`, `k1:${long},k1:${secret()}`, `${long},${secret()}`, `k1:${long},${secret()}`, ","]) {
      refusal(() => keySecretsFrom({ ALLOWANCE_KEY_SECRET: value }), [long]);
    }
  });
});

describe("the delegate key's seal", () => {
  const plain = secret();
  const k1: KeySecret = { kid: "k1", secret: secret() };
  const k2: KeySecret = { kid: "k2", secret: secret() };

  it("under a plain secret: as before kids, so existing deployments' keys open and stay as they are", () => {
    const secrets = [{ kid: null, secret: plain }];
    assert.deepEqual(unsealDelegateKey(sealedBeforeKids(plain), ADDRESS, secrets), { privateKey: PRIVATE_KEY, current: true });
    const sealed = sealDelegateKey(PRIVATE_KEY, ADDRESS, secrets);
    assert.doesNotMatch(sealed, /\./, "no kid");
    assert.deepEqual(unsealDelegateKey(sealed, ADDRESS, secrets), { privateKey: PRIVATE_KEY, current: true });
  });

  it("under kid:secret pairs: records the first's kid, and opens under it", () => {
    const sealed = sealDelegateKey(PRIVATE_KEY, ADDRESS, [k1]);
    assert.match(sealed, /^k1\.[A-Za-z0-9_-]+$/);
    assert.deepEqual(unsealDelegateKey(sealed, ADDRESS, [k1]), { privateKey: PRIVATE_KEY, current: true });
  });

  it("rotated (the old secret second): opens, is not current, and sealed again opens under the new secret alone", () => {
    const old = sealDelegateKey(PRIVATE_KEY, ADDRESS, [k1]);
    assert.deepEqual(unsealDelegateKey(old, ADDRESS, [k2, k1]), { privateKey: PRIVATE_KEY, current: false });
    const again = sealDelegateKey(PRIVATE_KEY, ADDRESS, [k2, k1]);
    assert.match(again, /^k2\./);
    assert.deepEqual(unsealDelegateKey(again, ADDRESS, [k2]), { privateKey: PRIVATE_KEY, current: true });
  });

  it("from a plain secret to pairs: a seal without a kid opens under the pair that holds that secret", () => {
    const named = { kid: "k0", secret: plain };
    assert.deepEqual(unsealDelegateKey(sealedBeforeKids(plain), ADDRESS, [named, k2]), { privateKey: PRIVATE_KEY, current: true });
    assert.deepEqual(unsealDelegateKey(sealedBeforeKids(plain), ADDRESS, [k2, named]), { privateKey: PRIVATE_KEY, current: false });
  });

  it("a seal under a kid opens wherever its secret is configured, whatever names it there (a plain instance mid-rotation)", () => {
    const sealed = sealDelegateKey(PRIVATE_KEY, ADDRESS, [{ kid: "k0", secret: plain }, k2]);
    assert.deepEqual(unsealDelegateKey(sealed, ADDRESS, [{ kid: null, secret: plain }]), { privateKey: PRIVATE_KEY, current: true });
  });

  it("no configured secret opens it: a ConfigError naming ALLOWANCE_KEY_SECRET and no secret", () => {
    const all = [plain, k1.secret, k2.secret];
    const sealed = sealDelegateKey(PRIVATE_KEY, ADDRESS, [k1]);
    assert.match(
      refusal(() => unsealDelegateKey(sealed, ADDRESS, [k2]), all),
      /sealed under the kid k1\b/,
      "dropped too soon",
    );
    refusal(() => unsealDelegateKey(sealed, ADDRESS, [{ kid: "k1", secret: k2.secret }]), all); // k1 names another secret
    assert.match(
      refusal(() => unsealDelegateKey(sealedBeforeKids(plain), ADDRESS, [k1, k2]), all),
      /sealed under a secret without a kid/,
    );
    refusal(() => unsealDelegateKey(sealed, "0x000000000000000000000000000000000000dEaD", [k1]), all); // bound to its address
  });
});
