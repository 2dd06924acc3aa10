// The server's delegate key: every allowance delegates to its address, and it signs the one-shot redelegation of
// each spend to the relayer. Generated on first use, kept in the database (so every instance uses the same one)
// sealed with AES-256-GCM under a key derived from ALLOWANCE_KEY_SECRET; it never leaves the server.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { db } from "@/lib/db";
import { delegateKeySecret } from "./settings";

function sealingKey(): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(delegateKeySecret()), Buffer.alloc(0), "agent-wallet delegate key v1", 32));
}

function seal(privateKey: string, address: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(), iv);
  cipher.setAAD(Buffer.from(address.toLowerCase()));
  const body = Buffer.concat([cipher.update(privateKey, "utf8"), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

function unseal(sealed: string, address: string): `0x${string}` {
  const bytes = Buffer.from(sealed, "base64url");
  const decipher = createDecipheriv("aes-256-gcm", sealingKey(), bytes.subarray(0, 12));
  decipher.setAAD(Buffer.from(address.toLowerCase()));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString("utf8") as `0x${string}`;
}

let loading: Promise<PrivateKeyAccount> | undefined;

/** The delegate account; the first call of the first instance creates it, and every instance then reads the oldest. */
export function delegateAccount(): Promise<PrivateKeyAccount> {
  loading ??= load().catch((error) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function load(): Promise<PrivateKeyAccount> {
  const oldest = () => db().delegateKey.findFirst({ orderBy: [{ createdAt: "asc" }, { address: "asc" }] });
  let row = await oldest();
  if (!row) {
    const privateKey = generatePrivateKey();
    const address = privateKeyToAccount(privateKey).address;
    await db().delegateKey.create({ data: { address, sealed: seal(privateKey, address) } });
    // Two instances starting at once may both create one: all of them use the oldest.
    row = await oldest();
  }
  if (!row) throw new Error("the delegate key could not be stored");
  const account = privateKeyToAccount(unseal(row.sealed, row.address));
  if (account.address !== row.address) throw new Error("the delegate key does not match its address");
  return account;
}
