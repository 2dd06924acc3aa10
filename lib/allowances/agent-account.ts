// An allowance's agent account (decision 0035): an EOA of the allowance's own, which the allowance funds by a
// redemption the chain caps, payment by payment, so that it signs the EIP-3009 authorization a stock x402 merchant's
// facilitator settles. Made on the allowance's first such payment, its key kept in the database sealed under
// ALLOWANCE_KEY_SECRET as the delegate key is (key-secret.ts): a copy of both opens it, as it opens the delegate key.
import { randomBytes } from "node:crypto";
import { encodeFunctionData, erc20Abi, getAddress, parseAbi, parseSignature, toHex, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts";
import { LRUCache } from "lru-cache";
import { db, selectRows } from "@/lib/db";
import { PreparedSelect } from "@/lib/db/prepared";
import { onChain } from "@/lib/wallet/chains";
import { nativeAccount, type ServerAccount } from "@/lib/wallet/native-signer";
import { TRANSFER_WITH_AUTHORIZATION } from "@/contract/eip3009";
import { answersEip3009, returnByPermit2 } from "./agent-account-permit2";
import { unclaimed } from "./agent-account-balance";
import { findAllowance } from "./allowances";
import { EXPIRED_MARGIN_MS } from "./caveats";
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

/** The agent account's sweep still waiting in the relayer's ledger: reconciliation broadcasts it again until it lands. */
const SWEEP_IN_FLIGHT = new PreparedSelect<{ hash: string }>(
  "sweep_in_flight",
  `SELECT "hash" FROM "RelayedTransaction" WHERE "allowanceId" = ? AND "purpose" = 'sweep' AND "status" = 'sent' LIMIT 1`,
);

/**
 * What a revoked (or expired) allowance's agent account holds goes back to the person: for each of its tokens, an
 * EIP-3009 transfer of the whole balance to the person's account (a Permit2 transfer for a token without EIP-3009),
 * signed by the agent account (it has no gas) and sent by the relayer, as a sweep of its own in the ledger (purpose
 * "sweep": reconciliation writes its outcome, and broadcasts it again when the node lost it) and audited with the
 * ledger's row, before it leaves. Authorizations it signed and no facilitator settled yet fail from then on: the
 * allowance stopped. Nothing is sent while an earlier sweep of it still waits; once the account holds none of the
 * allowance's tokens it is marked returned, and never read again. Answers the transactions sent, mined; throws when
 * one could not be sent or did not land, so that the next pass (returnStoppedAgentAccounts) tries again.
 * `live`: the person takes back the float of an allowance that goes on (decision 0038): only what the account holds
 * free of its payments on their way is sent back, those payments still settle, and the account stays in use.
 */
export async function returnAgentAccount(allowanceId: string, lease: { waitMs?: number; live?: boolean } = {}): Promise<Hex[]> {
  const account = await existingAgentAccount(allowanceId);
  if (!account) return [];
  const allowance = await findAllowance(allowanceId);
  const person = getAddress(allowance.delegator);
  const tokens = [...new Set(allowance.delegations.flatMap((row) => (row.token ? [getAddress(row.token)] : [])))];
  return withLease(
    `agent-account:${account.address}`,
    async () => {
      if ((await selectRows(SWEEP_IN_FLIGHT, allowanceId)).length) return [];
      const sent: Hex[] = [];
      for (const token of tokens) {
        const read = <T>(call: Parameters<typeof onChain<T>>[1]) => onChain(allowance.chainId, call);
        const eip3009 = await answersEip3009(allowance.chainId, token);
        const balance = lease.live
          ? await unclaimed({ allowanceId, chainId: allowance.chainId, token, permit2: !eip3009 }, account.address, new Date())
          : await read((client) =>
              client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [account.address] }),
            );
        // a token of the allowance the account was never funded in: nothing to send back
        if (balance === 0n) continue;
        // a token without EIP-3009 (paid by permit2) goes back through Permit2 (agent-account-permit2.ts)
        const owner = { allowanceId, userId: allowance.userId, chainId: allowance.chainId };
        const sweep = eip3009
          ? await byAuthorization(account, token, balance)
          : await returnByPermit2(owner, account, token, person, balance);
        const relayed = await relay(
          allowance.chainId,
          { to: sweep.to, data: sweep.data },
          { purpose: "sweep", userId: allowance.userId, allowanceId },
          {
            ...(sweep.relayer && { relayer: sweep.relayer }),
            auditWith: (txHash) => [
              {
                type: "agent_account.returned",
                userId: allowance.userId,
                credentialId: allowance.credentialId,
                data: {
                  allowanceId,
                  amount: `${balance} of token ${token}`,
                  from: account.address,
                  to: person,
                  txHash,
                  ...(lease.live && { live: true }),
                },
              },
            ],
          },
        );
        const receipt = await relayed.receipt();
        if (receipt.status !== "success") throw new Error(`the sweep ${receipt.transactionHash} of the agent account reverted`);
        if (!lease.live)
          await db().x402Payment.updateMany({ where: { allowanceId, token, status: "authorized" }, data: { status: "returned" } });
        sent.push(relayed.hash);
      }
      if (lease.live) return sent;
      // every token read empty or swept: nothing of the allowance's is left in the account
      await db().agentAccount.update({ where: { allowanceId }, data: { returnedAt: new Date() } });
      return sent;
    },
    lease,
  );

  /** An EIP-3009 transfer of `balance` of `token` from the account to the person, signed by the account. */
  async function byAuthorization(
    account: ServerAccount,
    token: Address,
    balance: bigint,
  ): Promise<{ to: Address; data: Hex; relayer?: undefined }> {
    const read = <T>(call: Parameters<typeof onChain<T>>[1]) => onChain(allowance.chainId, call);
    const [name, version] = await Promise.all([
      read((client) => client.readContract({ address: token, abi: TOKEN_DOMAIN, functionName: "name" })),
      read((client) => client.readContract({ address: token, abi: TOKEN_DOMAIN, functionName: "version" })),
    ]);
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
    return { to: token, data };
  }
}

/** A pass waits this long for an account's lease: a sweep or a payment holds it while on its way. */
const LEASE_WAIT_MS = 1_000;

/**
 * Sends back what the agent accounts of stopped allowances still hold: a sweep that could not be sent at the
 * revocation (the node, the relayer's budget), or an allowance that expired. Each account under its lease; one held
 * (a sweep on its way) is tried on the next pass, as is one whose sweep failed (said by its error's name only).
 */
export async function returnStoppedAgentAccounts(): Promise<void> {
  // revoked, or dead on chain: expired, past the margin the chain's clock may run off ours
  const stopped = await db().agentAccount.findMany({
    where: {
      returnedAt: null,
      allowance: { OR: [{ status: "revoked" }, { expiresAt: { lt: new Date(Date.now() - EXPIRED_MARGIN_MS) } }] },
    },
    select: { allowanceId: true },
    take: 50,
  });
  for (const { allowanceId } of stopped) {
    await returnAgentAccount(allowanceId, { waitMs: LEASE_WAIT_MS }).catch((error: unknown) => {
      if ((error as Error).name !== "LeaseTimeoutError")
        console.error(`Returning allowance ${allowanceId}'s agent account failed: ${(error as Error).name}`);
    });
  }
}
