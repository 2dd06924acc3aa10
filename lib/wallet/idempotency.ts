// Idempotency keys (issue 55): the tools that pay or ask for a signature take `idempotency_key`, stored with the request
// the call creates beside a hash of the call's arguments. A retry by the same grant with the same key and arguments is
// answered with the first call's request (or pay_x402's first answer) and creates nothing; with other arguments it is
// refused and changes nothing. Between concurrent calls the database decides: the request's insert finds the key taken
// (a unique index per grant, tool and key), its transaction rolls back with everything it held, and the call answers
// with the request that won. A key lives as long as its request (lib/db/sweep.ts).
import type { CallEvent } from "@/lib/audit";
import { canonicalJson, sha256Hex } from "@/lib/crypto";
import { NotFoundError } from "@/lib/http/errors";
import type { ToolName } from "@/contract";
import type { AgentContext } from "./agent-context";
import { IdempotencyKeyTaken, RequestError, requestByKey, type RequestRow } from "./request-lifecycle";

/** A call's idempotency key, and the hash of what it asks: stored with the request it creates. */
export type Idempotency = { tool: ToolName; key: string; hash: string };

/** A request's key, and the tool's answer for the request's id when a retry is answered with it (pay_x402). */
export type KeyedRequest = Idempotency & { answer?: (requestId: string) => unknown };

/** The tool call a request is created for: its audit event (recorded with a payment's own), and its key. */
export type AgentCall = { called?: CallEvent; idempotency?: Idempotency };

/** The key was first used for other arguments: refused, nothing done. */
export class IdempotencyKeyReused extends RequestError {
  constructor(
    idempotency: Idempotency,
    /** the request the key's first call created */
    readonly requestId: string,
  ) {
    super(
      "idempotency_key_reused",
      `idempotency_key ${JSON.stringify(idempotency.key)} was used with other arguments: ${idempotency.tool} answered it with ` +
        `request ${requestId}. Nothing was done; give each new call a new key`,
      409,
    );
  }
}

/**
 * The call's idempotency key and the hash of its canonical arguments, without the key and wait_seconds (how long to
 * wait changes nothing asked); undefined when the call gave no key.
 */
export function idempotencyOf(tool: ToolName, input: Record<string, unknown>): Idempotency | undefined {
  const { idempotency_key: key, wait_seconds: _wait, ...asked } = input;
  return typeof key === "string" ? { tool, key, hash: sha256Hex(canonicalJson(asked)) } : undefined;
}

/** How often a call looks for the key's request again after it lost the key to another call. */
const ATTEMPTS = 3;

/**
 * Runs `create` (which stores `idempotency` with its request) unless the grant's request of that key answers the
 * call: `replay` of it when the arguments are the same, a refusal when they are not. A call whose insert found the key
 * taken by a concurrent one (IdempotencyKeyTaken) answers with that one's request; so does a call whose key's request
 * went meanwhile (a payment its allowance refused before sending, asked of the person instead), once it is there again.
 */
export async function once<T>(
  agent: AgentContext,
  idempotency: Idempotency | undefined,
  create: () => Promise<T>,
  replay: (row: RequestRow) => Promise<T>,
): Promise<T> {
  if (!idempotency) return create();
  for (let attempt = 1; ; attempt++) {
    const last = attempt === ATTEMPTS;
    const earlier = await requestByKey(agent.grantId, idempotency.tool, idempotency.key);
    try {
      if (!earlier) return await create();
      if (earlier.idempotencyHash !== idempotency.hash) throw new IdempotencyKeyReused(idempotency, earlier.id);
      return await replay(earlier);
    } catch (error) {
      if (last || !(error instanceof IdempotencyKeyTaken || (earlier && error instanceof NotFoundError))) throw error;
    }
  }
}
