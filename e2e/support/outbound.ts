// Every outbound connection this process opens, seen through Node's diagnostics channels: fetch (undici, which
// viem's HTTP transport and the kit's telemetry use) reports the host it is about to connect to, before any DNS
// lookup; net.connect (PostgreSQL's driver) reports its socket, whose peer is read once connected.
import diagnostics from "node:diagnostics_channel";
import type { Socket } from "node:net";

export type Outbound = { hosts: () => string[]; stop: () => void };

export function recordOutbound(): Outbound {
  const hosts = new Set<string>();
  const onFetch = (message: unknown) => {
    const params = (message as { connectParams?: { hostname?: string; port?: string } }).connectParams;
    if (params?.hostname) hosts.add(params.hostname);
  };
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    socket.once("lookup", (_error, _address, _family, host) => hosts.add(String(host)));
    socket.once("connect", () => socket.remoteAddress && hosts.add(socket.remoteAddress));
  };
  diagnostics.subscribe("undici:client:beforeConnect", onFetch);
  diagnostics.subscribe("net.client.socket", onSocket);
  return {
    hosts: () => [...hosts].sort(),
    stop: () => {
      diagnostics.unsubscribe("undici:client:beforeConnect", onFetch);
      diagnostics.unsubscribe("net.client.socket", onSocket);
    },
  };
}
