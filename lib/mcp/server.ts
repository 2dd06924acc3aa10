import { McpServer, type ProtocolEra, type ServerContext, type Tool } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { systemClock } from "@/lib/clock";
import { payFromAllowance } from "@/lib/allowances/agent";
import { askedAllowance } from "@/lib/allowances/asked";
import { registerSlice } from "@/lib/allowances/slices";
import { prepareAgentPayment, signedAgentPayment } from "@/lib/allowances/agent-leaf";
import { delegationFromJson, type DelegationJson } from "@/lib/allowances/caveats";
import { delegationHash } from "@/lib/allowances/delegation-encoding";
import { earlierPayment, payX402 } from "@/lib/x402/pay";
import type { RequestRow } from "@/lib/wallet/request-lifecycle";
import { cancelRequest, createRequest, getRequest, waitForDecision, type Payer } from "@/lib/wallet/requests";
import { MAX_WAIT_SECONDS, TOOLS, type RequestView, type ToolName } from "@/contract";
import { APPROVAL_ROUND_SECONDS, askForApproval, canApproveByUrl, resumeApproval, verifyApprovalState } from "./elicited-approval";
import { hangUpSignal } from "./caller";
import { PLAIN_READS, runTool, type ToolCall, type ToolInput, type ToolOutcome } from "./tool-run";
import { idempotencyOf, type Idempotency } from "@/lib/wallet/idempotency";
import { decodeExactExecutionTerms } from "@metamask/delegation-core";
import { isTaskCall } from "./task-calls";
import { registerTasks } from "./tasks";

const DESCRIPTIONS: Record<ToolName, string> = {
  list_credentials:
    "The wallet credentials this client was granted: id, name, kind, address, and approval mode " +
    "(read: no signatures; approve: signatures wait for the person's passkey; allowance: payments within the person's " +
    "on-chain allowance go without a tap, the rest as approve); and whose they are (the start of the person's email) " +
    "and this client's name as the person sees it.",
  get_balance:
    "The native balance of a granted credential on a configured chain (the only one when chain_id is left out), in wei and " +
    "formatted, and its balances of the ERC-20 tokens named in `tokens` (by default, those its spending policy caps there); " +
    "each with `fiat`, its value in the person's currency from the chain's Chainlink feed when one gives a fresh price.",
  sign_message:
    "Asks the person to sign a text message (EIP-191) with an approve-mode credential. " +
    `Returns a pending request with its approval_url at once, or waits up to wait_seconds (≤ ${MAX_WAIT_SECONDS}) for the decision; ` +
    "the signature is in the completed request.",
  sign_typed_data: "Asks the person to sign EIP-712 typed data with an approve-mode credential. Returns a request like sign_message.",
  send_transaction:
    "Asks the person to sign and send a native transfer or contract call. The service prepares nonce, gas and fees; " +
    "the person approves with a passkey; the request then carries the transaction hash. With an allowance-mode credential, " +
    "a payment within its allowance is sent at once and answered completed with its hash; above it, it goes to the " +
    "person or is refused, as they chose.",
  get_request:
    "The status of a request (pending, approved, submitted, completed, failed, rejected, expired, cancelled), " +
    "its result or the reason. Waits up to wait_seconds for a decision.",
  list_requests: "This client's recent requests, newest first, optionally filtered by status.",
  cancel_request: "Cancels a request that is still pending.",
  get_policy:
    "The person's spending policy for a granted credential and what is left of each limit now (with when it frees up), " +
    "so an agent can plan instead of guessing. A request that breaks a rule is refused before it reaches the person.",
  pay_x402:
    "Pays an x402 requirement (a resource's PAYMENT-REQUIRED header value, or a V1 402 body) from the credential's allowance " +
    "with no tap: picks an offer the allowance covers (exact scheme by erc7710, a chain and token it allows, a listed payee, " +
    "within what is left and the policy) and answers the header and value to retry the request with, and what was paid, to " +
    "whom, for what. Agent Wallet never fetches the resource. Above what is left, when the person chose to refuse, it is " +
    "refused with what is left and when it resets. With an approve-mode credential, or what the allowance does not cover " +
    "(or goes above, when the person chose to be asked), it asks the person instead (one passkey tap; exact scheme by " +
    "eip3009, or permit2 once the wallet lets Permit2 take the amount; the request's reason says why the allowance did " +
    "not pay): it answers at once with request_id " +
    "and approval_url and no header yet; get_request answers `payment` (header and value) once the person approved.",
  request_allowance:
    "Asks the person for an allowance that a key this agent holds spends (ERC-7715's permission request): for the address " +
    "`to`, per period (periodDuration) of the chain's coin and/or tokens (permissions), to the named payees or, tokens only, " +
    "any payee with a most per payment, for a number of payments in all, until `expiry`; `justification` is shown to the " +
    "person. Answers a pending request with its approval_url (or waits up to wait_seconds); once the person approved it " +
    "with a passkey, get_request's `permission` carries the signed delegations (ERC-7715's granted permissions: each " +
    "`context` is redeemed with DelegationManager.redeemDelegations from `to`'s key). Agent Wallet holds no key that can " +
    "spend it. A new allowance replaces the wallet's previous one for this client on that chain.",
  register_allowance_slice:
    "Tells the person of a slice of an allowance that this agent's own key spends, passed on to another key (a " +
    "sub-agent's): each context is ABI-encoded [the slice, a delegation from the agent's key under one of the " +
    "allowance's with the same caveats narrower: a lower cap, fewer payees or payments, a sooner end; the allowance's " +
    "delegation]. Checked and shown under the allowance on Clients; the chain enforces it, and revoking the allowance " +
    "stops it too. The SDK's sliceAllowance signs and registers one.",
  prepare_allowance_payment:
    "For an allowance that this agent's own key spends (request_allowance): checks that it covers the payment (the coin " +
    "to a payee, or a token's transfer(recipient, amount) as `data`) and answers the one-time delegation to sign with " +
    "that key: from it to Agent Wallet's relayer, under the allowance's delegation, allowing exactly this call once " +
    "for five minutes, with its EIP-712 typed data. Sign it (the SDK's payFromAllowance checks it first) and send it " +
    "with send_allowance_payment; the relayer pays the gas within the person's budget. Nothing is held or sent.",
  send_allowance_payment:
    "Sends a payment of an allowance this agent's own key spends: prepare_allowance_payment's delegation, signed with " +
    "that key. The relayer sends exactly the call it allows, and pays the gas, once the allowance and the spending policy " +
    "cover it; answered like send_transaction from an allowance (completed with its hash, or submitted while it is not " +
    "yet mined). Sent again, the same signed delegation answers the first payment.",
  get_allowance:
    "The on-chain allowances of a granted credential: each limit in words, what is left this period, when it resets, " +
    "how many payments are left in all (over the allowance's whole life: that count never resets), and when it expires.",
};

function annotationsOf(name: ToolName) {
  const spec = TOOLS[name];
  return {
    readOnlyHint:
      !spec.sensitive &&
      name !== "cancel_request" &&
      name !== "pay_x402" &&
      name !== "request_allowance" &&
      name !== "register_allowance_slice" &&
      name !== "send_allowance_payment",
    openWorldHint: name === "get_balance" || name === "send_transaction" || name === "send_allowance_payment",
  };
}

/** The SDK's conversion (zod's Standard JSON Schema, draft 2020-12), applied once per process instead of per server. */
function jsonSchemaOf(schema: z.ZodObject, io: "input" | "output"): Tool["inputSchema"] {
  return { type: "object", ...z.toJSONSchema(schema, { target: "draft-2020-12", io }) } as Tool["inputSchema"];
}

let definitions: Record<ToolName, Tool> | undefined;

/** What tools/list answers: every tool, whatever the caller's grant (a tool outside it refuses the call). */
export function toolList(): Tool[] {
  return Object.values(toolDefinitions());
}

/**
 * tools/list is the same for every caller, and a server lives for one request: its JSON Schemas are converted
 * once per process here, where the SDK would convert them on every tools/list and every tools/call.
 */
function toolDefinitions(): Record<ToolName, Tool> {
  definitions ??= Object.fromEntries(
    (Object.keys(TOOLS) as ToolName[]).map((name): [ToolName, Tool] => [
      name,
      {
        name,
        description: DESCRIPTIONS[name],
        inputSchema: jsonSchemaOf(TOOLS[name].input, "input"),
        outputSchema: jsonSchemaOf(TOOLS[name].output, "output"),
        annotations: annotationsOf(name),
        // 2025-11-25 tasks: a signature may be asked for as a task (lib/mcp/tasks.ts); 2026-07-28 clients ignore it.
        ...(TOOLS[name].sensitive && { execution: { taskSupport: "optional" as const } }),
      },
    ]),
  ) as Record<ToolName, Tool>;
  return definitions;
}

/**
 * The call's idempotency key and what it stands for (idempotencyOf). send_allowance_payment's stands for the payment its
 * delegation makes (the credential, the chain and the exact call), not for the delegation: a retry whose answer was
 * lost may come with a newly prepared delegation of the same payment, and is answered the first payment. Left out,
 * its key is the signed delegation's hash, since that delegation pays once.
 */
function idempotencyFor<N extends ToolName>(name: N, input: ToolInput<N>): Idempotency | undefined {
  if (name !== "send_allowance_payment") return idempotencyOf(name, input as Record<string, unknown>);
  const sent = input as ToolInput<"send_allowance_payment">;
  const leaf = delegationFromJson(sent.delegation as DelegationJson);
  let call: unknown = sent.delegation;
  try {
    call = decodeExactExecutionTerms(leaf.caveats[0].terms).execution;
  } catch {
    // not a leaf of one exact call: signedAgentPayment refuses it
  }
  return idempotencyOf(name, {
    credential_id: sent.credential_id,
    chain_id: sent.chain_id,
    call: JSON.parse(JSON.stringify(call, (_key, value) => (typeof value === "bigint" ? value.toString() : value))),
    idempotency_key: sent.idempotency_key ?? `delegation:${delegationHash(leaf)}`,
  });
}

/** The server's identity, as initialize answers it and as a 2026-07-28 result's _meta carries it. */
export const SERVER_INFO = { name: "agent-wallet", version: "0.1.0" };

/**
 * A server for one request of that era, whose tools see exactly the caller's grant. It registers only the tools
 * the request calls: tools/list is answered from the definitions, and registering every tool for every call was a
 * tenth of a read call's allocations (docs/performance.md).
 */
export function createMcpServer(agent: AgentContext, era: ProtocolEra, calledTools: ReadonlySet<string>): McpServer {
  const server = new McpServer(
    SERVER_INFO,
    // The tool list never changes while the server runs: no list_changed notifications to promise.
    { capabilities: { tools: { listChanged: false } }, requestState: { verify: verifyApprovalState } },
  );

  function tool<N extends ToolName>(name: N, run: (input: ToolInput<N>, ctx: ServerContext, call: ToolCall) => Promise<ToolOutcome>) {
    if (!calledTools.has(name)) return;
    const spec = TOOLS[name];
    const registered = server.registerTool(
      name,
      { description: DESCRIPTIONS[name], inputSchema: spec.input, outputSchema: spec.output, annotations: annotationsOf(name) },
      ((input: ToolInput<N>, ctx: ServerContext) =>
        runTool(agent, name, input, (call) => run(input, ctx, call), idempotencyFor(name, input))) as never,
    );
    // Served with the JSON Schema converted once per process (see toolDefinitions).
    registered.outputSchemaJson = toolDefinitions()[name].outputSchema;
  }

  /** With wait_seconds, hold the call until the person decides, with progress notifications. */
  function waited(view: RequestView, seconds: number | undefined, ctx: ServerContext): Promise<RequestView> {
    if (!seconds) return Promise.resolve(view);
    return waitForDecision(agent, view.request_id, seconds, { onProgress: progressReporter(view, ctx), signal: hangUpSignal(ctx) });
  }

  /**
   * A request a retry with its idempotency key is answered with, as it stands now; one still being paid from an
   * allowance (or sent) once it settled, waiting at most as long as the first call waits for its receipt.
   */
  async function earlierRequest(row: RequestRow, ctx: ServerContext): Promise<RequestView> {
    const view = await getRequest(agent, row.id);
    if (isTaskCall(ctx) || (view.status !== "approved" && view.status !== "submitted")) return view;
    return waitForDecision(agent, row.id, MAX_WAIT_SECONDS, { signal: hangUpSignal(ctx) });
  }

  /**
   * A sensitive tool: re-entered with its approval state, it reports on that request; a client that can open
   * a URL is asked to send the person to the approval page; any other client gets the pending request, and
   * so does a call answered as a task (the task then follows the request). A request already completed (paid
   * from an allowance) is answered as it is. A retry with the first call's idempotency key gets that call's request,
   * as a first call gets its own.
   */
  async function sensitive(
    asked: Parameters<typeof createRequest>[1],
    call: ToolCall,
    ctx: ServerContext,
    payer: Payer = payFromAllowance,
  ): Promise<ToolOutcome> {
    const seconds = asked.wait_seconds;
    const hold = (view: RequestView) => waited(view, seconds ?? APPROVAL_ROUND_SECONDS, ctx);
    if (ctx.mcpReq.requestState() !== undefined) return resumeApproval(agent, asked.kind, ctx, hold);
    // only a transaction may be paid from an allowance (with the call's event recorded with the payment's)
    const paying = asked.kind === "send_transaction" && { payer, called: call.called };
    const create = () => createRequest(agent, asked, { ...paying, idempotency: call.idempotency });
    const view = await call.once(create, (row) => earlierRequest(row, ctx));
    // a payment from an allowance is already completed: nobody needs asking
    if (isTaskCall(ctx) || view.status !== "pending") return view;
    return canApproveByUrl(ctx) ? askForApproval(view, ctx) : waited(view, seconds, ctx);
  }

  tool("list_credentials", () => PLAIN_READS.list_credentials(agent));
  tool("get_balance", (input) => PLAIN_READS.get_balance(agent, input));
  tool("sign_message", (input, ctx, call) => sensitive({ kind: "sign_message", ...input }, call, ctx));
  tool("sign_typed_data", (input, ctx, call) => sensitive({ kind: "sign_typed_data", ...input }, call, ctx));
  tool("send_transaction", (input, ctx, call) => sensitive({ kind: "send_transaction", ...input }, call, ctx));
  tool("get_request", async (input, ctx) => waited(await getRequest(agent, input.request_id), input.wait_seconds, ctx));
  tool("list_requests", (input) => PLAIN_READS.list_requests(agent, input));
  tool("cancel_request", (input) => cancelRequest(agent, input.request_id));
  tool("get_policy", (input) => PLAIN_READS.get_policy(agent, input));
  tool("get_allowance", (input) => PLAIN_READS.get_allowance(agent, input));
  tool("request_allowance", async (input, ctx, call) => {
    const allowance = await askedAllowance(agent, input);
    const asked = { kind: "request_allowance" as const, credential_id: input.credential_id, allowance, wait_seconds: input.wait_seconds };
    return sensitive(asked, call, ctx);
  });
  tool("register_allowance_slice", (input) => registerSlice(agent, input));
  tool("prepare_allowance_payment", (input) => prepareAgentPayment(agent, input));
  tool("send_allowance_payment", async (input, ctx, call) => {
    const { transaction, leaf } = await signedAgentPayment(agent, input);
    const asked = {
      kind: "send_transaction" as const,
      credential_id: input.credential_id,
      chain_id: transaction.chainId,
      to: transaction.to,
      value: transaction.value,
      data: transaction.data,
      wait_seconds: input.wait_seconds,
    };
    const payer: Payer = (...[payerAgent, credential, payment, clock, paid]) =>
      payFromAllowance(payerAgent, credential, payment, clock, { ...paid, leaf });
    return sensitive(asked, call, ctx, payer);
  });
  tool("pay_x402", (input, _ctx, call) =>
    call.once(
      () => payX402(agent, input.credential_id, input.payment_required, systemClock, call),
      (row) =>
        earlierPayment(agent, row, (funded) =>
          payX402(agent, input.credential_id, input.payment_required, systemClock, { ...call, funded }),
        ),
    ),
  );
  server.server.setRequestHandler("tools/list", () => ({ tools: toolList() }));
  registerTasks(server, agent, era);

  return server;
}

/** Progress notifications while a call waits for the person, when the client gave a progress token. */
function progressReporter(view: RequestView, ctx: ServerContext) {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  return (elapsed: number, total: number) =>
    ctx.mcpReq.notify({
      method: "notifications/progress",
      params: { progressToken: token, progress: elapsed, total, message: `Waiting for approval at ${view.approval_url}` },
    });
}
