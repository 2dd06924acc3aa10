// An x402 facilitator for the `exact` scheme's erc7710 transfer on the tests' local chain: no package ships one yet
// (`@x402/evm` settles eip3009 and permit2; `@metamask/x402` is client and server side only). It follows the
// specification's two steps: verify = an eth_call of DelegationManager.redeemDelegations from the facilitator's own
// address (the Redeemer caveat names it), gas-capped; settle = send that call and find the token's Transfer of exactly
// the amount to the payee in the receipt. Its key is a fresh one, funded for gas.
import { concat, decodeEventLog, encodeFunctionData, erc20Abi, getAddress, pad, toHex, type Address, type Hex } from "viem";
import { DelegationManager } from "@metamask/delegation-abis";
import type { FacilitatorClient } from "@x402/core/server";
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from "@x402/core/types";
import { fundedWallet, type LocalChain } from "./chain";

/** ERC-7579's "single call, revert on failure" mode. */
const SINGLE_DEFAULT_MODE = pad("0x00", { size: 32 });
/** A redemption of a two-link chain costs about 360k gas (455k at a root's first use): a cap with margin. */
const GAS_CAP = 800_000n;

type DelegationPayload = { delegationManager: Address; permissionContext: Hex; delegator: Address };

function delegationPayloadOf(payload: Record<string, unknown>): DelegationPayload | null {
  const { delegationManager, permissionContext, delegator } = payload;
  const isAddress = (value: unknown) => typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value);
  if (
    !isAddress(delegationManager) ||
    !isAddress(delegator) ||
    typeof permissionContext !== "string" ||
    !/^0x([0-9a-fA-F]{2})+$/.test(permissionContext)
  )
    return null;
  return {
    delegationManager: getAddress(delegationManager as string),
    permissionContext: permissionContext as Hex,
    delegator: getAddress(delegator as string),
  };
}

export type Erc7710Facilitator = FacilitatorClient & {
  address: Address;
  /** the facilitator's reason of its last refusal (the 402 only says `erc7710_simulation_failed`) */
  lastRefusal: () => string | null;
};

/** `alsoNamed`: other facilitators its requirements name before it, as a merchant taking several would. */
export async function startErc7710Facilitator(
  chain: LocalChain,
  manager: Address,
  { alsoNamed = [] }: { alsoNamed?: Address[] } = {},
): Promise<Erc7710Facilitator> {
  const delegationManager = getAddress(manager);
  const wallet = await fundedWallet(chain);
  const { account } = wallet;
  const network = `eip155:${chain.chainId}` as Network;
  let refusal: string | null = null;

  /** The redeemDelegations call that moves exactly what the requirement asks, from the payload's delegation chain. */
  function redemption(payload: PaymentPayload, requirements: PaymentRequirements): { data: Hex; delegator: Address } | string {
    if (requirements.scheme !== "exact" || requirements.network !== network) return "unsupported_scheme";
    const delegation = delegationPayloadOf(payload.payload);
    if (!delegation) return "invalid_payload";
    if (delegation.delegationManager !== delegationManager) return "unknown_delegation_manager";
    const transfer = encodeFunctionData({
      abi: erc20Abi,
      functionName: "transfer",
      args: [getAddress(requirements.payTo), BigInt(requirements.amount)],
    });
    const execution = concat([getAddress(requirements.asset), pad(toHex(0n), { size: 32 }), transfer]);
    return {
      data: encodeFunctionData({
        abi: DelegationManager,
        functionName: "redeemDelegations",
        args: [[delegation.permissionContext], [SINGLE_DEFAULT_MODE], [execution]],
      }),
      delegator: delegation.delegator,
    };
  }

  async function verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const call = redemption(payload, requirements);
    if (typeof call === "string") return { isValid: false, invalidReason: call };
    try {
      await chain.client.call({ account: account.address, to: delegationManager, data: call.data, gas: GAS_CAP });
    } catch (error) {
      refusal = (error as Error).message;
      return { isValid: false, invalidReason: "erc7710_simulation_failed", payer: call.delegator };
    }
    refusal = null;
    return { isValid: true, payer: call.delegator };
  }

  async function settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const failed = (errorReason: string, payer?: string): SettleResponse => ({
      success: false,
      errorReason,
      transaction: "",
      network,
      payer,
    });
    const verified = await verify(payload, requirements);
    if (!verified.isValid) return failed(verified.invalidReason ?? "invalid", verified.payer);
    const call = redemption(payload, requirements) as { data: Hex; delegator: Address };
    const hash = await wallet.sendTransaction({ to: delegationManager, data: call.data, gas: GAS_CAP });
    const receipt = await chain.client.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") return failed("transaction_reverted", call.delegator);
    const paid = receipt.logs.some((log) => {
      if (getAddress(log.address) !== getAddress(requirements.asset)) return false;
      try {
        const event = decodeEventLog({ abi: erc20Abi, data: log.data, topics: log.topics });
        return (
          event.eventName === "Transfer" &&
          getAddress(event.args.from) === call.delegator &&
          getAddress(event.args.to) === getAddress(requirements.payTo) &&
          event.args.value === BigInt(requirements.amount)
        );
      } catch {
        return false;
      }
    });
    if (!paid) return failed("transfer_not_found", call.delegator);
    return { success: true, transaction: hash, network, payer: call.delegator };
  }

  return {
    address: account.address,
    lastRefusal: () => refusal,
    verify,
    settle,
    getSupported: async (): Promise<SupportedResponse> => ({
      kinds: [{ x402Version: 2, scheme: "exact", network, extra: { facilitatorAddresses: [...alsoNamed, account.address] } }],
      extensions: [],
      signers: { "eip155:*": [account.address] },
    }),
  };
}
