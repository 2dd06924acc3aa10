import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { toJsonSchemaCompat } from "@modelcontextprotocol/sdk/server/zod-json-schema-compat.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import { ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { AgentContext } from "@/lib/wallet/agent-context";
import { recordAudit, type AuditInput } from "@/lib/audit";
import { HttpError } from "@/lib/http/errors";
import { listGrantedCredentials } from "@/lib/wallet/credentials";
import { getBalance } from "@/lib/wallet/balance";
import { PolicyViolation, policyView } from "@/lib/wallet/policy";
import { cancelRequest, createRequest, getRequest, listRequests, waitForDecision } from "@/lib/wallet/requests";
import { MAX_WAIT_SECONDS, TOOLS, type RequestView, type ToolName } from "@/contract";

const DESCRIPTIONS: Record<ToolName, string> = {
  list_credentials:
    "The wallet credentials this client was granted: id, name, kind, address, and approval mode " +
    "(read: no signatures; approve: signatures wait for the person's passkey).",
  get_balance: "The native balance of a granted credential on a configured chain, in wei and formatted.",
  sign_message:
    "Asks the person to sign a text message (EIP-191) with an approve-mode credential. " +
    `Returns a pending request with its approval_url at once, or waits up to wait_seconds (≤ ${MAX_WAIT_SECONDS}) for the decision; ` +
    "the signature is in the completed request.",
  sign_typed_data: "Asks the person to sign EIP-712 typed data with an approve-mode credential. Returns a request like sign_message.",
  send_transaction:
    "Asks the person to sign and send a native transfer or contract call. The service prepares nonce, gas and fees; " +
    "the person approves with a passkey; the request then carries the transaction hash.",
  get_request:
    "The status of a request (pending, approved, submitted, completed, failed, rejected, expired, cancelled), " +
    "its result or the reason. Waits up to wait_seconds for a decision.",
  list_requests: "This client's recent requests, newest first, optionally filtered by status.",
  cancel_request: "Cancels a request that is still pending.",
  get_policy:
    "The person's spending policy for a granted credential and what is left of each limit now (with when it frees up), " +
    "so an agent can plan instead of guessing. A request that breaks a rule is refused before it reaches the person.",
};

type Extra = {
  _meta?: { progressToken?: string | number };
  sendNotification: (notification: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; total: number; message?: string };
  }) => Promise<void>;
};

function annotationsOf(name: ToolName) {
  const spec = TOOLS[name];
  return {
    readOnlyHint: !spec.sensitive && name !== "cancel_request",
    openWorldHint: name === "get_balance" || name === "send_transaction",
  };
}

let toolList: Tool[] | undefined;
let sharedValidator: AjvJsonSchemaValidator | undefined;

/** One JSON Schema validator per process: the SDK would build an Ajv instance for every server. */
function validator(): AjvJsonSchemaValidator {
  sharedValidator ??= new AjvJsonSchemaValidator();
  return sharedValidator;
}

/**
 * tools/list is the same for every caller, so its JSON Schemas are converted
 * once per process (the SDK would convert all of them on every request), with
 * the SDK's own converter and options.
 */
function toolDefinitions(): Tool[] {
  toolList ??= (Object.keys(TOOLS) as ToolName[]).map((name) => ({
    name,
    description: DESCRIPTIONS[name],
    inputSchema: toJsonSchemaCompat(TOOLS[name].input, { strictUnions: true, pipeStrategy: "input" }) as Tool["inputSchema"],
    outputSchema: toJsonSchemaCompat(TOOLS[name].output, { strictUnions: true, pipeStrategy: "output" }) as Tool["outputSchema"],
    annotations: annotationsOf(name),
  }));
  return toolList;
}

function ok<T extends Record<string, unknown>>(result: T): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
}

/** A fresh MCP server whose tools see exactly the caller's grant. */
/**
 * A sensitive tool's call is answered only once its event is committed. A read tool's event is committed
 * with the next group of appends, after the answer: the read changed nothing, and waiting for the audit
 * lock halved read throughput (docs/performance.md).
 */
async function audit(sensitive: boolean, event: AuditInput): Promise<void> {
  const appended = recordAudit(event);
  if (sensitive) return appended;
  appended.catch((error: unknown) => console.error(`audit append failed: ${(error as Error).message}`));
}

export function createMcpServer(agent: AgentContext): McpServer {
  const server = new McpServer(
    { name: "agent-wallet", version: "0.1.0" },
    { capabilities: { tools: {} }, jsonSchemaValidator: validator() },
  );

  function tool<N extends ToolName>(
    name: N,
    run: (input: z.infer<(typeof TOOLS)[N]["input"]>, extra: Extra) => Promise<Record<string, unknown>>,
  ) {
    const spec = TOOLS[name];
    server.registerTool(
      name,
      {
        description: DESCRIPTIONS[name],
        inputSchema: spec.input.shape,
        outputSchema: spec.output.shape,
        annotations: annotationsOf(name),
      } as never,
      (async (input: z.infer<(typeof TOOLS)[N]["input"]>, extra: Extra) => {
        const credentialId = (input as { credential_id?: string }).credential_id ?? null;
        const audited = { type: "mcp.tool_called", userId: agent.userId, clientId: agent.clientId, credentialId } as const;
        try {
          const result = await run(input, extra);
          await audit(spec.sensitive, {
            ...audited,
            requestId: (result as { request_id?: string }).request_id,
            data: { tool: name, outcome: "ok" },
          });
          return ok(result);
        } catch (error) {
          const message = error instanceof HttpError ? error.message : "The tool failed unexpectedly";
          if (!(error instanceof HttpError)) console.error(`tool ${name} failed:`, (error as Error).message);
          await audit(spec.sensitive, { ...audited, data: { tool: name, outcome: "error", error: message } });
          // A policy refusal is also machine-readable: the rule and what is left of it.
          const structured =
            error instanceof PolicyViolation
              ? { structuredContent: { error: error.code, rule: error.rule, allowance: error.allowance } }
              : {};
          return { isError: true, content: [{ type: "text", text: message }], ...structured } satisfies CallToolResult;
        }
      }) as never,
    );
  }

  /** With wait_seconds, hold the call until the person decides, with progress notifications. */
  async function waited(view: RequestView, seconds: number | undefined, extra: Extra): Promise<RequestView> {
    if (!seconds) return view;
    const token = extra._meta?.progressToken;
    return waitForDecision(
      agent,
      view.request_id,
      seconds,
      token === undefined
        ? undefined
        : (elapsed, total) =>
            extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: elapsed, total, message: `Waiting for approval at ${view.approval_url}` },
            }),
    );
  }

  tool("list_credentials", async () => ({ credentials: await listGrantedCredentials(agent) }));
  tool("get_balance", (input) => getBalance(agent, input.credential_id, input.chain_id));
  tool("sign_message", async (input, extra) =>
    waited(await createRequest(agent, { kind: "sign_message", ...input }), input.wait_seconds, extra),
  );
  tool("sign_typed_data", async (input, extra) =>
    waited(await createRequest(agent, { kind: "sign_typed_data", ...input }), input.wait_seconds, extra),
  );
  tool("send_transaction", async (input, extra) =>
    waited(await createRequest(agent, { kind: "send_transaction", ...input }), input.wait_seconds, extra),
  );
  tool("get_request", async (input, extra) => waited(await getRequest(agent, input.request_id), input.wait_seconds, extra));
  tool("list_requests", async (input) => ({ requests: await listRequests(agent, input) }));
  tool("cancel_request", (input) => cancelRequest(agent, input.request_id));
  tool("get_policy", (input) => policyView(agent, input.credential_id));
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolDefinitions() }));

  return server;
}
