import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createRecoveryKit, openRecoveryKit, RecoveryKitError } from "./recovery-kit";

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

  it("refuses a short passphrase when creating a kit", async () => {
    await assert.rejects(createRecoveryKit(generatePrivateKey(), "short"), /at least 12 characters/);
  });
});
