import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createRecoveryKit, openRecoveryKit, RecoveryKitError, SCRYPT_BOUNDS } from "./recovery-kit";

const passphrase = "correct horse battery staple";

describe("recovery kit", () => {
  it("round-trips a key under its passphrase and holds no plaintext", async () => {
    const privateKey = generatePrivateKey();
    const kit = await createRecoveryKit(privateKey, passphrase);
    const text = JSON.stringify(kit);
    assert.equal(kit.address, privateKeyToAccount(privateKey).address);
    assert.equal(kit.kdf, "scrypt");
    assert.ok(!text.toLowerCase().includes(privateKey.slice(2).toLowerCase()));
    assert.deepEqual(await openRecoveryKit(JSON.parse(text), passphrase), { privateKey, address: kit.address });
  });

  it("refuses a wrong passphrase", async () => {
    const kit = await createRecoveryKit(generatePrivateKey(), passphrase);
    await assert.rejects(openRecoveryKit(kit, passphrase + "!"), { name: "RecoveryKitError", message: /Wrong passphrase/ });
  });

  it("refuses a tampered ciphertext", async () => {
    const kit = await createRecoveryKit(generatePrivateKey(), passphrase);
    const flipped = (kit.ciphertext[0] === "A" ? "B" : "A") + kit.ciphertext.slice(1);
    await assert.rejects(openRecoveryKit({ ...kit, ciphertext: flipped }, passphrase), /Wrong passphrase, or the recovery kit was changed/);
  });

  it("refuses a kit whose address was changed", async () => {
    const kit = await createRecoveryKit(generatePrivateKey(), passphrase);
    const other = privateKeyToAccount(generatePrivateKey()).address;
    await assert.rejects(openRecoveryKit({ ...kit, address: other }, passphrase), RecoveryKitError);
  });

  it("refuses an unknown version and a file that is not a kit", async () => {
    const kit = await createRecoveryKit(generatePrivateKey(), passphrase);
    await assert.rejects(openRecoveryKit({ ...kit, version: 2 }, passphrase), /Unknown recovery kit version: 2/);
    await assert.rejects(openRecoveryKit({ hello: "world" }, passphrase), /not a recovery kit/);
  });

  for (const [what, params] of [
    ["N beyond 2^17", { N: 2 ** 21, r: 8, p: 1 }],
    ["r beyond 8", { N: 2 ** 14, r: 16, p: 1 }],
    ["p beyond 4", { N: 2 ** 14, r: 1, p: 8 }],
    ["N·r·p beyond 2^20", { N: 2 ** 17, r: 8, p: 2 }],
  ] as const) {
    it(`refuses a kit with scrypt ${what}, naming the parameters and the bound, before any scrypt work`, async () => {
      const kit = await createRecoveryKit(generatePrivateKey(), passphrase);
      const { N, r, p } = kit.params;
      assert.ok(N <= SCRYPT_BOUNDS.maxN && r <= SCRYPT_BOUNDS.maxR && p <= SCRYPT_BOUNDS.maxP, "a new kit is within the bounds");
      assert.ok(N * r * p <= SCRYPT_BOUNDS.maxWork / 2, "the bound allows twice a new kit's work");
      const hostile = { ...kit, params: { ...kit.params, ...params } };
      await assert.rejects(openRecoveryKit(hostile, passphrase), (error: Error) => {
        assert.ok(error instanceof RecoveryKitError);
        assert.equal(
          error.message,
          `This recovery kit asks for more work than a kit may (scrypt N = ${params.N}, r = ${params.r}, p = ${params.p}; ` +
            "at most N = 131072, r = 8, p = 4 and N·r·p = 1048576), so it was not opened: Agent Wallet does not write such kits",
        );
        return true;
      });
    });
  }

  it("refuses scrypt parameters that are no parameters at all as damage", async () => {
    const kit = await createRecoveryKit(generatePrivateKey(), passphrase);
    for (const params of [{ N: 3 * 2 ** 14 }, { N: 2 ** 10 }, { r: 0 }, { p: 1.5 }, { N: "65536" }])
      await assert.rejects(openRecoveryKit({ ...kit, params: { ...kit.params, ...params } }, passphrase), /This recovery kit is damaged/);
  });

  it("refuses a short passphrase when creating a kit", async () => {
    await assert.rejects(createRecoveryKit(generatePrivateKey(), "short"), /at least 12 characters/);
  });
});
