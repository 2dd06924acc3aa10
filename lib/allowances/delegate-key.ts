// The server's delegate key: every allowance of delegateKind "server" delegates to its address, and it signs the
// one-shot redelegation of each spend to the relayer (an allowance whose key the agent holds it never signs for,
// decision 0042). Generated on first use, kept in the database (so every instance uses the same one)
// sealed under ALLOWANCE_KEY_SECRET (lib/allowances/key-secret.ts); it never leaves the server.
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { nativeAccount, type ServerAccount } from "@/lib/wallet/native-signer";
import { db } from "@/lib/db";
import { sealDelegateKey, unsealDelegateKey } from "./key-secret";

let loading: Promise<ServerAccount> | undefined;

/** The delegate account; the first call of the first instance creates it, and every instance then reads the oldest. */
export function delegateAccount(): Promise<ServerAccount> {
  loading ??= load().catch((error) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function load(): Promise<ServerAccount> {
  const oldest = () => db().delegateKey.findFirst({ orderBy: [{ createdAt: "asc" }, { address: "asc" }] });
  let row = await oldest();
  if (!row) {
    const privateKey = generatePrivateKey();
    const address = privateKeyToAddress(privateKey);
    await db().delegateKey.create({ data: { address, sealed: sealDelegateKey(privateKey, address) } });
    // Two instances starting at once may both create one: all of them use the oldest.
    row = await oldest();
  }
  if (!row) throw new Error("the delegate key could not be stored");
  const { privateKey, current } = unsealDelegateKey(row.sealed, row.address);
  const account = nativeAccount(privateKey);
  if (account.address !== row.address) throw new Error("the delegate key does not match its address");
  if (!current) await sealAgain(row, privateKey);
  return account;
}

/**
 * Sealed under a secret that is no longer the first (ALLOWANCE_KEY_SECRET rotated): sealed under the first, unless
 * another instance changed the row since it was read — the key is the same either way.
 */
async function sealAgain(row: { address: string; sealed: string }, privateKey: `0x${string}`): Promise<void> {
  const { count } = await db().delegateKey.updateMany({
    where: { address: row.address, sealed: row.sealed },
    data: { sealed: sealDelegateKey(privateKey, row.address) },
  });
  if (count) console.log("The delegate key is now sealed under ALLOWANCE_KEY_SECRET's first secret.");
}
