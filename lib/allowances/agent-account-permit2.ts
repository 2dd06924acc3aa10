// An agent account's Permit2 side (decision 0039): before its first x402 payment by permit2 in a token, the account
// lets Permit2 take that token (`approve(Permit2, max)`), a transaction of its own, since Permit2 moves only what the
// token lets it. The account holds no ETH: the relayer sends it exactly the gas of that one approval, at most once per
// token, and the account sends it. Both are the relayer's ledger's, for the person's allowance: the relayer's transfer
// as any relayed transaction (its gas limit carrying the approval's, so that the person's gas and coin budgets and the
// relayer's reserve weigh both before anything is sent), the approval recorded before it is broadcast with its signed
// bytes, so that reconciliation hands it to the node again and writes its outcome after a crash. What a revoked
// allowance's account holds of such a token goes back by a Permit2 transfer the account signs and the relayer sends.
import { randomBytes } from "node:crypto";
import {
  encodeFunctionData,
  erc20Abi,
  hexToBigInt,
  maxUint256,
  parseAbi,
  serializeTransaction,
  toHex,
  zeroAddress,
  zeroHash,
  type Address,
  type Hex,
  type LocalAccount,
} from "viem";
import { runTransaction, unansweredAll, writeTogether } from "@/lib/db/transaction-script";
import { ChainError, onChain } from "@/lib/wallet/chains";
import type { ServerAccount } from "@/lib/wallet/native-signer";
import { keccak256 } from "@/lib/wallet/keccak";
import { PERMIT2, PERMIT_TRANSFER_FROM_TYPES } from "@/lib/wallet/permits";
import { feesNow, feesWithinMost, l1FeeOf } from "./fees";
import { withLease } from "./lease";
import { relay, relayerFor } from "./relay";
import { droppedRow, receiptRows, relayedRow, type RelayFor } from "./relayer-ledger";
import { receiptWatched } from "./receipt-watcher";
import { broadcastOn } from "./replacement";

/** A plain ETH transfer's gas, which the relayer's transfer to the account uses of its limit. */
const TRANSFER_GAS = 21_000n;
const RECEIPT_TIMEOUT_MS = 60_000;

/** Whose account it is: the allowance, its person and chain. */
type AccountOwner = { allowanceId: string; userId: string; chainId: number };

const EIP3009_STATE = parseAbi(["function authorizationState(address authorizer, bytes32 nonce) view returns (bool)"]);

/** Whether `token` has EIP-3009's transfers (it answers authorizationState); a chain that does not answer throws. */
export async function answersEip3009(chainId: number, token: Address): Promise<boolean> {
  return onChain(chainId, (client) =>
    client.readContract({ address: token, abi: EIP3009_STATE, functionName: "authorizationState", args: [zeroAddress, zeroHash] }).then(
      () => true,
      () => false,
    ),
  );
}

const allowedToPermit2 = (chainId: number, token: Address, account: Address) =>
  onChain(chainId, (client) => client.readContract({ address: token, abi: erc20Abi, functionName: "allowance", args: [account, PERMIT2] }));

/**
 * Makes sure Permit2 may take at least `amount` of `token` from the agent account: at once when it may already, else
 * by the account's own approval of the most (so that no later payment needs another), its gas sent by the relayer.
 * Under the account's own lease for it: two payments at once send one approval.
 */
export async function approvedForPermit2(owner: AccountOwner, account: ServerAccount, token: Address, amount: bigint): Promise<void> {
  const { chainId } = owner;
  if ((await allowedToPermit2(chainId, token, account.address)) >= amount) return;
  await withLease(`agent-account-approval:${account.address}`, async () => {
    if ((await allowedToPermit2(chainId, token, account.address)) >= amount) return;
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [PERMIT2, maxUint256] });
    const relayFor: RelayFor = { purpose: "approval", userId: owner.userId, allowanceId: owner.allowanceId };
    const { gas, fees, l1Fee, held, nonce } = await onChain(chainId, async (client) => {
      const [gas, now, held, nonce] = await Promise.all([
        // asked without fees: the account holds no ETH yet, and a node weighs a call with fees against its balance
        client.request({ method: "eth_estimateGas", params: [{ from: account.address, to: token, data }, "latest"] }).then(BigInt),
        feesNow(client),
        client.getBalance({ address: account.address }),
        client.getTransactionCount({ address: account.address, blockTag: "pending" }),
      ]);
      const fees = feesWithinMost(chainId, now, relayFor.purpose);
      const unsigned = { type: "eip1559", chainId, nonce, to: token, data, gas, ...fees } as const;
      return { gas, fees, l1Fee: await l1FeeOf(client, chainId, serializeTransaction(unsigned)), held, nonce };
    });
    const cost = gas * fees.maxFeePerGas + (l1Fee ?? 0n);
    // What an earlier approval left unspent (its price below its most) counts first: the relayer sends the rest.
    if (held < cost) {
      const sent = await relay(chainId, { to: account.address, data: "0x", value: cost - held, gas: TRANSFER_GAS + gas }, relayFor);
      await sent.receipt();
    }
    const signed = await account.signTransaction({ type: "eip1559", chainId, nonce, to: token, data, gas, ...fees });
    const hash = keccak256(signed);
    const row = { hash, chainId, relayer: account.address, nonce, raw: signed, gasLimit: gas, cost, l1Fee, for: relayFor };
    await runTransaction(function* () {
      yield* unansweredAll([relayedRow(row)]);
    });
    const answer = await onChain(chainId, (client) => broadcastOn(client, signed));
    if (answer !== "taken") {
      // never to be broadcast again (as a relayer's refused transaction): the next payment asks anew
      await writeTogether([droppedRow(hash)]);
      throw new ChainError(`The node refused the agent account's approval of Permit2: ${answer.refused}`);
    }
    const receipt = await receiptWatched(chainId, {
      hashes: [hash],
      sender: { address: account.address, nonce },
      timeoutMs: RECEIPT_TIMEOUT_MS,
    });
    if (receipt === "taken") throw new ChainError(`Another transaction of the agent account took the nonce of its approval ${hash}.`);
    await runTransaction(function* () {
      yield* unansweredAll(receiptRows(receipt));
    });
    if (receipt.status !== "success") throw new ChainError(`The agent account's approval of Permit2 (${hash}) reverted.`);
  });
}

const PERMIT_TRANSFER_FROM = parseAbi([
  "struct TokenPermissions { address token; uint256 amount; }",
  "struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }",
  "struct SignatureTransferDetails { address to; uint256 requestedAmount; }",
  "function permitTransferFrom(PermitTransferFrom permit, SignatureTransferDetails transferDetails, address owner, bytes signature)",
]);

/**
 * The call that sends `balance`, the agent account's whole balance of `token` (one without EIP-3009), back to `person`:
 * a Permit2 transfer the account signs for the relayer that is to send it, Permit2's approval made first if the
 * account has none yet.
 */
export async function returnByPermit2(
  owner: AccountOwner,
  account: ServerAccount,
  token: Address,
  person: Address,
  balance: bigint,
): Promise<{ to: Address; data: Hex; relayer: LocalAccount }> {
  await approvedForPermit2(owner, account, token, balance);
  const relayer = relayerFor(owner.chainId);
  const permit = {
    permitted: { token, amount: balance },
    nonce: hexToBigInt(toHex(randomBytes(32))),
    deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
  };
  const signature = await account.signTypedData({
    domain: { name: "Permit2", chainId: owner.chainId, verifyingContract: PERMIT2 },
    types: PERMIT_TRANSFER_FROM_TYPES,
    primaryType: "PermitTransferFrom",
    message: { ...permit, spender: relayer.address },
  });
  const data = encodeFunctionData({
    abi: PERMIT_TRANSFER_FROM,
    functionName: "permitTransferFrom",
    args: [permit, { to: person, requestedAmount: balance }, account.address, signature],
  });
  return { to: PERMIT2, data, relayer };
}
