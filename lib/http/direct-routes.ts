/**
 * Route handlers that the production server (server.ts) calls straight from node:http, past Next's routing:
 * /mcp, /oauth/token and a passkey approval, the hot paths (docs/decisions/0011-mcp-beside-next.md). A route module
 * registers its own handlers when Next first loads it, so the server calls the very module instance Next would, with
 * its state (database client, audit queue, rate-limit counters); until then requests go through Next as usual.
 */
import { processWide } from "@/lib/runtime/process-wide";

type RouteContext = { params: Promise<Record<string, string>> };
type RouteHandlers = Partial<Record<string, (request: Request, context: RouteContext) => Response | Promise<Response>>>;

const registry = () => processWide("direct-routes", () => new Map<string, RouteHandlers>());

/** Called by a route module with its exported handlers; `route` as its folder names it (`/api/approvals/[id]/approve`). */
export function serveDirectly(route: string, handlers: RouteHandlers): void {
  registry().set(route, handlers);
}

/** The `[name]` segments of `route` in `pathname`, or null when it is not that route's path. */
function paramsOf(route: string, pathname: string): Record<string, string> | null {
  const want = route.split("/");
  const have = pathname.split("/");
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let index = 0; index < want.length; index++) {
    const segment = want[index];
    if (segment.startsWith("[") && segment.endsWith("]")) {
      if (!have[index]) return null;
      try {
        params[segment.slice(1, -1)] = decodeURIComponent(have[index]);
      } catch {
        return null;
      }
    } else if (segment !== have[index]) return null;
  }
  return params;
}

/** The handler for this path and method, with the route's parameters, once its route module has registered it. */
export function directHandler(pathname: string, method: string): ((request: Request) => Response | Promise<Response>) | undefined {
  const routes = registry();
  const exact = routes.get(pathname)?.[method];
  if (exact) return (request) => exact(request, NO_PARAMS);
  for (const [route, handlers] of routes) {
    const handler = route.includes("[") ? handlers[method] : undefined;
    const params = handler && paramsOf(route, pathname);
    if (handler && params) return (request) => handler(request, { params: Promise.resolve(params) });
  }
  return undefined;
}

const NO_PARAMS: RouteContext = { params: Promise.resolve({}) };
