// Relaying a payment from an allowance whose key the agent holds (decision 0042): the server prepares the relayer's
// one-time delegation of exactly that call (prepare_allowance_payment), the agent signs it with its own key, and the
// relayer sends what was signed (send_allowance_payment) as it sends any payment of an allowance: within the spending
// policy and the person's gas budget, checked against what is left, rehearsed, recorded before the broadcast. The
// relayer can redeem nothing else with it: the delegation names it alone, allows that one call once, and ends within
// minutes; and the server, holding no key the allowance names, cannot sign one itself.
import {
  createExactExecutionTerms,
  createLimitedCallsTerms,
  createTimestampTerms,
  decodeExactExecutionTerms,
  decodeLimitedCallsTerms,
  decodeTimestampTerms,
} from "@metamask/delegation-core";
import { getAddress, isAddressEqual, recoverTypedDataAddress, type Address, type Hex } from "viem";
import type { ToolInput, ToolOutput } from "@/contract";
import { delegationTypedData } from "@/contract/delegation";
import { AppError } from "@/lib/http/errors";
import type { AgentContext } from "@/lib/wallet/agent-context";
import type { AskedTransaction } from "@/lib/wallet/requests";
import { onChain } from "@/lib/wallet/chains";
import { RequestError } from "@/lib/wallet/request-lifecycle";
import { frameworkFor, type Allowance } from "./allowances";
import { delegationFromJson, delegationToJson, randomSalt, type Delegation } from "./caveats";
import { liveAllowances } from "./live";
import { relayerFor, relayerNamed } from "./relay";
import { payingDelegation, paymentOf } from "./spend";
import { abovePerPayment, agentHeldJudgement, refusalWordsOf } from "./agent";

/** How long the relayer can send a prepared payment: long enough to sign it, short enough that an unsent one dies. */
const LEAF_LIFETIME_SECONDS = 300;

/** A delegation send_allowance_payment does not send: what is wrong with it, and nothing was held, signed or sent. */
class LeafError extends AppError {
  constructor(message: string) {
    super("invalid_delegation", `${message}. Nothing was sent.`, 400);
  }
}

/** The grant's live allowance of this credential on this chain, which must be one the agent's key spends. */
async function agentHeldAllowance(agent: AgentContext, credentialId: string, chainId: number, now: Date): Promise<Allowance> {
  const entry = agent.credentials.find((granted) => granted.credentialId === credentialId);
  if (!entry) throw new RequestError("credential_not_granted", `Credential ${credentialId} is not in this client's grant`, 403);
  const live = entry.mode === "allowance" ? await liveAllowances(agent.grantId, credentialId, now, { fresh: true }) : null;
  const allowance = live?.allowances.find((candidate) => candidate.chainId === chainId);
  if (!allowance) throw new RequestError("allowance_unavailable", "No live allowance of this credential covers this chain.", 409);
  if (allowance.delegateKind !== "agent")
    throw new RequestError(
      "allowance_unavailable",
      "This allowance's key is Agent Wallet's: send_transaction pays from it, with nothing for the agent to sign.",
      409,
    );
  return allowance;
}

/** The leaf's three caveats, in this order: what it lets the relayer do, how often, and until when. */
function leafCaveats(allowance: Allowance, execution: { target: Address; value: bigint; callData: Hex }, before: number) {
  const enforcers = frameworkFor(allowance.chainId).caveatEnforcers;
  return [
    { enforcer: enforcers.ExactExecutionEnforcer, terms: createExactExecutionTerms({ execution }), args: "0x" as Hex },
    { enforcer: enforcers.LimitedCallsEnforcer, terms: createLimitedCallsTerms({ limit: 1 }), args: "0x" as Hex },
    {
      enforcer: enforcers.TimestampEnforcer,
      terms: createTimestampTerms({ afterThreshold: 0, beforeThreshold: before }),
      args: "0x" as Hex,
    },
  ];
}

/**
 * prepare_allowance_payment: the one-time delegation of this payment from the agent's key to a relayer, for the agent
 * to sign, once the allowance is found to cover it (its asset and payee, what is left, its payments, the most per
 * payment); one it does not cover is refused in the person's units. Nothing is stored: send_allowance_payment checks
 * everything again.
 */
export async function prepareAgentPayment(
  agent: AgentContext,
  input: ToolInput<"prepare_allowance_payment">,
  now = new Date(),
): Promise<ToolOutput<"prepare_allowance_payment">> {
  const allowance = await agentHeldAllowance(agent, input.credential_id, input.chain_id, now);
  const execution = { target: getAddress(input.to), value: BigInt(input.value), callData: (input.data ?? "0x") as Hex };
  const payment = { to: execution.target, value: execution.value, data: execution.callData };
  const moved = paymentOf(payment);
  const [overMost, judged, block] = await Promise.all([
    abovePerPayment(allowance, payment),
    agentHeldJudgement(allowance, moved, now),
    // the leaf ends by the chain's clock, which a test chain may run ahead of ours
    onChain(allowance.chainId, (client) => client.getBlock({ blockTag: "latest" })),
  ]);
  const refusal = overMost ?? judged;
  if (refusal) throw new RequestError("allowance_refused", await refusalWordsOf(allowance, refusal, moved, now), 409);
  const framework = frameworkFor(allowance.chainId);
  const candidates = allowance.delegations.filter((row) => (row.token ?? null) === moved!.token);
  const paying = payingDelegation(framework, candidates, moved!.recipient)!;
  const relayer = relayerFor(allowance.chainId);
  const before = Number(block.timestamp) + LEAF_LIFETIME_SECONDS;
  const leaf: Delegation = {
    delegate: relayer.address,
    delegator: getAddress(allowance.delegate),
    authority: paying.hash as Hex,
    caveats: leafCaveats(allowance, execution, before),
    salt: randomSalt(),
    signature: "0x",
  };
  const typed = delegationTypedData(framework.DelegationManager, allowance.chainId, leaf);
  return {
    allowance_id: allowance.id,
    relayer: relayer.address,
    delegation: delegationToJson(leaf),
    typed_data: {
      domain: typed.domain,
      types: { Delegation: [...typed.types.Delegation], Caveat: [...typed.types.Caveat] },
      primaryType: typed.primaryType,
      message: { ...typed.message, salt: leaf.salt.toString() },
    },
    expires_at: new Date(before * 1000).toISOString(),
  };
}

/**
 * send_allowance_payment's delegation, checked before anything is held: from the key of the grant's live allowance on
 * that chain, under one of its delegations, to one of the chain's relayers, allowing one exact call (read from it),
 * signed by that key. Answers the transaction it pays and the leaf, for payFromAllowance.
 */
export async function signedAgentPayment(
  agent: AgentContext,
  input: ToolInput<"send_allowance_payment">,
  now = new Date(),
): Promise<{ transaction: AskedTransaction; leaf: Delegation }> {
  const allowance = await agentHeldAllowance(agent, input.credential_id, input.chain_id, now);
  const leaf = delegationFromJson(input.delegation as Parameters<typeof delegationFromJson>[0]);
  if (!isAddressEqual(leaf.delegator, allowance.delegate as Address))
    throw new LeafError(`The delegation is not from this allowance's key ${getAddress(allowance.delegate)}`);
  if (!allowance.delegations.some((row) => row.hash.toLowerCase() === leaf.authority.toLowerCase()))
    throw new LeafError("The delegation is not under one of this allowance's delegations (its authority)");
  if (!relayerNamed(allowance.chainId, leaf.delegate))
    throw new LeafError(`The delegation's delegate ${leaf.delegate} is not a relayer of payments on this chain`);
  const [exact, calls, time, ...more] = leaf.caveats;
  const expected = frameworkFor(allowance.chainId).caveatEnforcers;
  const named = (caveat: (typeof leaf.caveats)[number] | undefined, enforcer: Address) =>
    caveat !== undefined && isAddressEqual(caveat.enforcer, enforcer) && caveat.args === "0x";
  if (
    more.length ||
    !named(exact, expected.ExactExecutionEnforcer) ||
    !named(calls, expected.LimitedCallsEnforcer) ||
    !named(time, expected.TimestampEnforcer)
  )
    throw new LeafError("The delegation's caveats are not prepare_allowance_payment's: ExactExecution, LimitedCalls and Timestamp");
  let execution;
  try {
    execution = decodeExactExecutionTerms(exact.terms).execution;
    if (decodeLimitedCallsTerms(calls.terms).limit !== 1 || decodeTimestampTerms(time.terms).afterThreshold !== 0) throw new Error();
  } catch {
    throw new LeafError("The delegation's caveats do not allow exactly one call, as prepare_allowance_payment's do");
  }
  const manager = frameworkFor(allowance.chainId).DelegationManager;
  const signer = await recoverTypedDataAddress({
    ...delegationTypedData(manager, allowance.chainId, leaf),
    signature: leaf.signature,
  }).catch(() => null);
  if (!signer || !isAddressEqual(signer, leaf.delegator)) throw new LeafError("The delegation is not signed by the allowance's key");
  return {
    transaction: {
      chainId: allowance.chainId,
      to: getAddress(execution.target),
      value: String(execution.value),
      data: execution.callData as Hex,
    },
    leaf,
  };
}
