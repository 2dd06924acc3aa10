/**
 * Route handlers that the production server (server.ts) calls straight from node:http, past Next's routing:
 * /mcp and /oauth/token, the agents' hot paths (docs/decisions/0011-mcp-beside-next.md). A route module registers its own
 * handlers when Next first loads it, so the server calls the very module instance Next would, with its state
 * (database client, audit queue, rate-limit counters); until then requests go through Next as usual.
 */
type RouteHandlers = Partial<Record<string, (request: Request) => Response | Promise<Response>>>;

const REGISTRY = Symbol.for("agent-wallet.direct-routes");

function registry(): Map<string, RouteHandlers> {
  const holder = globalThis as { [REGISTRY]?: Map<string, RouteHandlers> };
  holder[REGISTRY] ??= new Map();
  return holder[REGISTRY];
}

/** Called by a route module with its exported handlers. */
export function serveDirectly(pathname: string, handlers: RouteHandlers): void {
  registry().set(pathname, handlers);
}

/** The handler for this path and method, once its route module has registered it. */
export function directHandler(pathname: string, method: string): RouteHandlers[string] {
  return registry().get(pathname)?.[method];
}
