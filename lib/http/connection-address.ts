import type { RequestListener } from "node:http";

/**
 * The header in which the production server hands every request the address of the connection it came on: route
 * handlers see a Request, never the socket. Whatever a client sends under this name is replaced.
 */
export const CONNECTION_ADDRESS_HEADER = "x-agent-wallet-connection";

/** Set on globalThis, not in this module: server.ts and Next's route bundles each hold their own copy of it. */
const STAMPED = Symbol.for("agent-wallet.connection-address");

/** `listener`, with the connection's address written into CONNECTION_ADDRESS_HEADER before anything reads the request. */
export function withConnectionAddress(listener: RequestListener): RequestListener {
  (globalThis as { [STAMPED]?: boolean })[STAMPED] = true;
  return (req, res) => {
    req.headers[CONNECTION_ADDRESS_HEADER] = req.socket.remoteAddress ?? "";
    listener(req, res);
  };
}

/** Whether this process's server stamps every request (server.ts), so that the header can be believed; not under `next start`. */
export function stampsConnectionAddress(): boolean {
  return (globalThis as { [STAMPED]?: boolean })[STAMPED] === true;
}
