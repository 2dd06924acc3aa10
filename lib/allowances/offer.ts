// Why consent offers no allowance mode: a person who reads of allowances and finds only Read and Approve is told which
// chain lacks what, rather than left to guess.
import { config } from "@/lib/config";
import { allowanceChains } from "./settings";
import { allowanceFramework } from "@/lib/wallet/chains";

/** Null when some chain offers allowances; otherwise one sentence per chain on what it lacks. */
export function whyNoAllowance(): string | null {
  if (allowanceChains().length > 0) return null;
  const lacks = config().chains.map((chain) =>
    allowanceFramework(chain.id)
      ? `${chain.name} has no relayer to pay an allowance's network fees (ALLOWANCE_RELAYERS)`
      : `${chain.name} has no Delegation Framework, the contracts that enforce an allowance on chain (ALLOWANCE_FRAMEWORKS)`,
  );
  return `The allowance mode is not offered here: ${lacks.join("; ")}. The operator sets these up (docs/operations.md).`;
}
