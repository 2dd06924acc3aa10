// An allowance's agent account (decision 0035): an EOA of the allowance's own, which the allowance funds by a
// redemption the chain caps, payment by payment, so that it signs the EIP-3009 authorization a stock x402 merchant's
// facilitator settles. Made on the allowance's first such payment, its key kept in the database sealed under
// ALLOWANCE_KEY_SECRET as the delegate key is (key-secret.ts): a copy of both opens it, as it opens the delegate key.
import { randomBytes } from "node:crypto";
import { encodeFunctionData, erc20Abi, getAddress, parseAbi, parseSignature, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { LRUCache } from "lru-cache";
import { db } from "@/lib/db";
import { onChain } from "@/lib/wallet/chains";
import { nativeAccount, type ServerAccount } from "@/lib/wallet/native-signer";
import { TRANSFER_WITH_AUTHORIZATION } from "@/lib/wallet/permits";
import { answersEip3009, returnByPermit2 } from "./agent-account-permit2";
import { findAllowance } from "./allowances";
import { sealDelegateKey, unsealDelegateKey } from "./key-secret";
import { withLease } from "./lease";
import { relay } from "./relay";

const opened = new LRUCache<string, Promise<ServerAccount>>({ max: 10_000 });

/** The allowance's agent account, made on first use; every instance reads the one stored first. */
export function agentAccountOf(allowanceId: string): Promise<ServerAccount> {
  const known = opened.get(allowanceId);
  if (known) return known;
  const loading = load(allowanceId).catch((error: unknown) => {
    opened.delete(allowanceId);
    throw error;
  });
  opened.set(allowanceId, loading);
  return loading;
}

/** The allowance's agent account if it has one, without making it. */
async function existingAgentAccount(allowanceId: string): Promise<ServerAccount | null> {
  const row = await db().agentAccount.findUnique({ where: { allowanceId } });
  return row ? agentAccountOf(allowanceId) : null;
}

async function load(allowanceId: string): Promise<ServerAccount> {
  const stored = () => db().agentAccount.findUnique({ where: { allowanceId } });
  let row = await stored();
  if (!row) {
    const privateKey = generatePrivateKey();
    const address = privateKeyToAddress(privateKey);
    // Two payments (or instances) making it at once: the one stored first stands, the other's key is dropped unused.
    await db()
      .agentAccount.create({ data: { allowanceId, address, sealed: sealDelegateKey(privateKey, address) } })
      .catch(() => undefined);
    row = await stored();
  }
  if (!row) throw new Error(`the agent account of allowance ${allowanceId} could not be stored`);
  const { privateKey, current } = unsealDelegateKey(row.sealed, row.address);
  const account = nativeAccount(privateKey);
  if (account.address !== row.address) throw new Error("the agent account's key does not match its address");
  // sealed under a secret rotated out of first place: sealed again under the first (the key is the same either way)
  if (!current)
    await db().agentAccount.updateMany({
      where: { allowanceId, sealed: row.sealed },
      data: { sealed: sealDelegateKey(privateKey, row.address) },
    });
  return account;
}

const TOKEN_DOMAIN = parseAbi(["function name() view returns (string)", "function version() view returns (string)"]);

/** FiatToken's transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, v, r, s). */
const TRANSFER_BY_AUTHORIZATION = [
  {
    type: "function",
    name: "transferWithAuthorization",
    stateMutability: "nonpayable",
    inputs: [...TRANSFER_WITH_AUTHORIZATION, { name: "v", type: "uint8" }, { name: "r", type: "bytes32" }, { name: "s", type: "bytes32" }],
    outputs: [],
  },
] as const;

/**
 * What a revoked (or expired) allowance's agent account holds goes back to the person: for each of its tokens, an
 * EIP-3009 transfer of the whole balance to the person's account (a Permit2 transfer for a token without EIP-3009),
 * signed by the agent account (it has no gas) and sent by the relayer. Authorizations it signed and no facilitator
 * settled yet fail from then on: the allowance stopped. Answers the transactions sent, mined.
 */
export async function returnAgentAccount(allowanceId: string): Promise<Hex[]> {
  const account = await existingAgentAccount(allowanceId);
  if (!account) return [];
  const allowance = await findAllowance(allowanceId);
  const person = getAddress(allowance.delegator);
  const tokens = [...new Set(allowance.delegations.flatMap((row) => (row.token ? [getAddress(row.token)] : [])))];
  return withLease(`agent-account:${account.address}`, async () => {
    const sent: Hex[] = [];
    const returned = (token: Address) =>
      db().x402Payment.updateMany({ where: { allowanceId, token, status: "authorized" }, data: { status: "returned" } });
    for (const token of tokens) {
      // a token without EIP-3009 (paid by permit2) goes back through Permit2 (agent-account-permit2.ts)
      if (!(await answersEip3009(allowance.chainId, token))) {
        const hash = await returnByPermit2({ allowanceId, userId: allowance.userId, chainId: allowance.chainId }, account, token, person);
        if (hash) sent.push(hash);
        await returned(token);
        continue;
      }
      const read = <T>(call: Parameters<typeof onChain<T>>[1]) => onChain(allowance.chainId, call);
      const [balance, name, version] = await Promise.all([
        read((client) => client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [account.address] })),
        read((client) => client.readContract({ address: token, abi: TOKEN_DOMAIN, functionName: "name" })),
        read((client) => client.readContract({ address: token, abi: TOKEN_DOMAIN, functionName: "version" })),
      ]);
      if (balance === 0n) continue;
      const message = {
        from: account.address,
        to: person,
        value: balance,
        validAfter: 0n,
        validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
        nonce: toHex(randomBytes(32)),
      };
      const signature = await account.signTypedData({
        domain: { name, version, chainId: allowance.chainId, verifyingContract: token },
        types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
        primaryType: "TransferWithAuthorization",
        message,
      });
      const { v, r, s } = parseSignature(signature);
      const data = encodeFunctionData({
        abi: TRANSFER_BY_AUTHORIZATION,
        functionName: "transferWithAuthorization",
        args: [message.from, message.to, message.value, message.validAfter, message.validBefore, message.nonce, Number(v), r, s],
      });
      const relayed = await relay(allowance.chainId, { to: token, data }, { purpose: "payment", userId: allowance.userId, allowanceId });
      await relayed.receipt();
      await returned(token);
      sent.push(relayed.hash);
    }
    return sent;
  });
}
