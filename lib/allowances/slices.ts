// Slices of an agent-held allowance that its agent passed on to other keys (sub-agents). The agent signs each slice
// itself (the SDK's sliceAllowance): a delegation from its key, under one of the allowance's, with the same caveats
// narrower (a lower cap, fewer payees, fewer payments, a sooner end). The chain enforces both the slice's caveats and
// its parent's on every redemption, and revoking the allowance disables the parent, so every slice of it with it. The
// agent tells Agent Wallet of a slice so that the person sees it under its parent on Clients; checked here exactly,
// it is stored, never signed: the server holds no key of either.
import { decodeDelegations } from "@metamask/delegation-core";
import { getAddress, type Address, type Hex } from "viem";
import { z } from "zod";
import { recordAudit } from "@/lib/audit";
import { randomId } from "@/lib/crypto";
import { db } from "@/lib/db";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { RequestError } from "@/lib/wallet/request-lifecycle";
import type { ToolInput, ToolOutput } from "@/contract";
import { AllowanceError, findAllowance, frameworkFor, signerOf, storedDelegation } from "./allowances";
import {
  delegationFromJson,
  delegationToJson,
  delegationTypedData,
  readCaveats,
  type Delegation,
  type DelegationJson,
  type DelegationMeaning,
} from "./caveats";
import { delegationHash } from "./delegation-encoding";

/** What a slice's stored delegations are: each with the hash of the allowance's delegation it narrows. */
const storedSlice = z.array(z.object({ hash: z.string(), parentHash: z.string(), signed: z.record(z.string(), z.unknown()) }));

/** Why a slice is not narrower than its parent, or null when every term is within it. */
function widerThan(parent: DelegationMeaning, slice: DelegationMeaning): string | null {
  if (slice.token !== parent.token) return "it moves another asset";
  if (slice.periodSeconds !== parent.periodSeconds || slice.startsAt !== parent.startsAt) return "its period differs";
  if (slice.perPeriod > parent.perPeriod) return "its amount per period is more";
  if (slice.transactions > parent.transactions) return "it allows more payments";
  if (slice.expiresAt > parent.expiresAt) return "it ends later";
  if (slice.notBefore < parent.notBefore) return "it starts sooner";
  if (slice.anyPayee && !parent.anyPayee) return "it pays anyone";
  if (!parent.anyPayee && slice.recipients.some((recipient) => !parent.recipients.includes(recipient))) return "it pays someone else";
  return null;
}

/** One passed-on delegation, from its permission context [slice, parent], checked against the allowance. */
function checkedSlice(
  allowance: Awaited<ReturnType<typeof findAllowance>>,
  to: Address,
  context: Hex,
): { delegation: Delegation; hash: Hex; parentHash: string } {
  const framework = frameworkFor(allowance.chainId);
  let decoded;
  try {
    decoded = decodeDelegations(context);
  } catch {
    throw new AllowanceError("A context is not an ABI-encoded chain of delegations.");
  }
  if (decoded.length !== 2)
    throw new AllowanceError("A slice's context is its delegation, then the allowance's it narrows: two delegations.");
  const [slice, parent] = decoded.map((entry): Delegation => ({
    delegate: getAddress(entry.delegate),
    delegator: getAddress(entry.delegator),
    authority: entry.authority,
    caveats: entry.caveats.map(({ enforcer, terms, args }) => ({ enforcer: getAddress(enforcer), terms, args })),
    salt: entry.salt,
    signature: entry.signature,
  }));
  const parentHash = delegationHash(parent);
  const parentRow = allowance.delegations.find((row) => row.hash.toLowerCase() === parentHash.toLowerCase());
  if (!parentRow) throw new AllowanceError("A slice must narrow one of this allowance's delegations, as the allowance gave it.");
  if (slice.authority.toLowerCase() !== parentHash.toLowerCase()) throw new AllowanceError("A slice's authority is its parent delegation.");
  if (slice.delegator !== getAddress(allowance.delegate)) throw new AllowanceError("A slice is passed on from the agent's own key.");
  if (slice.delegate !== to) throw new AllowanceError("Each slice must name `to`, the key it is passed on to.");
  if (slice.salt === 0n) throw new AllowanceError("Each slice needs a random salt.");
  if (signerOf(delegationTypedData(framework, allowance.chainId, slice), slice.signature) !== getAddress(allowance.delegate))
    throw new AllowanceError("A slice's signature is not the agent key's.");
  let meaning: DelegationMeaning;
  try {
    meaning = readCaveats(framework, slice.caveats);
  } catch (error) {
    throw new AllowanceError(`A slice carries its parent's caveats, narrower: ${(error as Error).message}`);
  }
  const wider = widerThan(storedDelegation(framework, parentRow).meaning, meaning);
  if (wider) throw new AllowanceError(`A slice is narrower than its parent, and this one is not: ${wider}.`);
  return { delegation: slice, hash: delegationHash(slice), parentHash: parentRow.hash };
}

/**
 * register_allowance_slice: records a slice the agent signed of one of its allowances (agent-held, live, of this
 * grant), for the person to see under it. Every delegation is checked before anything is stored; a refused one stores
 * nothing.
 */
export async function registerSlice(
  agent: AgentContext,
  input: ToolInput<"register_allowance_slice">,
): Promise<ToolOutput<"register_allowance_slice">> {
  const allowance = await findAllowance(input.allowance_id).catch(() => null);
  if (!allowance || allowance.grantId !== agent.grantId)
    throw new RequestError("allowance_not_found", "No such allowance of this client", 404);
  if (allowance.delegateKind !== "agent") throw new AllowanceError("Only an allowance the agent's own key spends can be passed on.");
  if (allowance.status !== "active" || allowance.expiresAt.getTime() <= Date.now())
    throw new AllowanceError("This allowance no longer pays: nothing of it can be passed on.", 409);
  const to = getAddress(input.to);
  if (to === getAddress(allowance.delegate)) throw new AllowanceError("A slice is passed on to another key than the agent's own.");
  const checked = input.contexts.map((context) => checkedSlice(allowance, to, context as Hex));
  if (new Set(checked.map(({ hash }) => hash)).size !== checked.length) throw new AllowanceError("Each slice may be given once.");
  const id = randomId("sl_");
  const delegations = checked.map(({ delegation, hash, parentHash }) => ({ hash, parentHash, signed: delegationToJson(delegation) }));
  await db().allowanceSlice.create({ data: { id, allowanceId: allowance.id, delegate: to, delegations: JSON.stringify(delegations) } });
  await recordAudit({
    type: "allowance.sliced",
    userId: agent.userId,
    clientId: agent.clientId,
    credentialId: allowance.credentialId,
    data: { allowanceId: allowance.id, sliceId: id, delegate: to, delegations: checked.map(({ hash }) => hash) },
  });
  return { slice_id: id, allowance_id: allowance.id, to, delegations: checked.length };
}

/** A slice as stored: its key and each delegation's meaning, as its parent's is read. */
export function sliceMeanings(chainId: number, row: { delegations: string }): { parentHash: string; meaning: DelegationMeaning }[] {
  const framework = frameworkFor(chainId);
  return storedSlice.parse(JSON.parse(row.delegations)).map(({ parentHash, signed }) => ({
    parentHash,
    meaning: readCaveats(framework, delegationFromJson(signed as unknown as DelegationJson).caveats),
  }));
}
