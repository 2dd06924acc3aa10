import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import ipaddr from "ipaddr.js";

/** Why an outbound fetch was refused or failed, in words fit for an error page. */
export class PublicFetchError extends Error {}

/**
 * Whether an address is ordinary public unicast. Everything ipaddr.js classifies otherwise is refused:
 * private, loopback, link-local (169.254.169.254, the cloud metadata service), CGNAT, unique-local
 * (fd00::/8), multicast, unspecified, reserved, and IPv6 forms that embed an IPv4 address (6to4,
 * Teredo, NAT64); an IPv4-mapped IPv6 address is judged as the IPv4 address it maps.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === "unicast";
}

export type PublicFetchOptions = {
  /** Development and tests only: loopback and private addresses, and plain http, are allowed. */
  allowPrivateHosts: boolean;
  timeoutMs?: number;
  maxBytes?: number;
};

export type FetchedJson = { body: unknown; cacheControl: string | null };

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MAX_BYTES = 64 * 1024;
const JSON_TYPE = /^application\/([\w.-]+\+)?json$/;

/**
 * Resolves the host itself and refuses it unless every address is public. The socket connects to the
 * address checked here, so a second resolution (DNS rebinding) cannot swap in another one.
 */
function checkedLookup(allowPrivateHosts: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: options.family, hints: options.hints }, (error, addresses) => {
      if (error) return callback(error, "");
      const refused = !allowPrivateHosts && addresses.some((entry) => !isPublicAddress(entry.address));
      // The address stays out of the message: it is shown to whoever chose the URL.
      if (refused) return callback(new PublicFetchError(`${hostname} resolves to a non-public address`), "");
      if (!addresses.length) return callback(new PublicFetchError(`${hostname} has no address`), "");
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * GET a small JSON document from a URL that someone else chose, safely (SSRF): HTTPS only, public
 * addresses only, no redirects, a time limit and a size limit enforced while reading.
 */
export function fetchPublicJson(url: URL, options: PublicFetchOptions): Promise<FetchedJson> {
  const { allowPrivateHosts, timeoutMs = DEFAULT_TIMEOUT_MS, maxBytes = DEFAULT_MAX_BYTES } = options;
  if (url.protocol !== "https:" && !(allowPrivateHosts && url.protocol === "http:")) {
    return Promise.reject(new PublicFetchError("only https URLs are fetched"));
  }
  // An IP literal never reaches the lookup: check it here.
  const literal = url.hostname.replace(/^\[|\]$/g, "");
  if (net.isIP(literal) && !allowPrivateHosts && !isPublicAddress(literal)) {
    return Promise.reject(new PublicFetchError(`${literal} is not a public address`));
  }
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(url, {
      method: "GET",
      headers: { Accept: "application/json" },
      lookup: checkedLookup(allowPrivateHosts),
      agent: false,
    });
    const deadline = setTimeout(() => request.destroy(new PublicFetchError(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(deadline);
      reject(error instanceof PublicFetchError ? error : new PublicFetchError(`the fetch failed: ${error.message}`));
    };
    request.on("error", fail);
    request.on("response", (response) => {
      const status = response.statusCode ?? 0;
      const type = (response.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
      let problem: string | null = null;
      if (status >= 300 && status < 400) problem = `it answered with a redirect (${status}), which is not followed`;
      else if (status !== 200) problem = `it answered ${status}`;
      else if (!JSON_TYPE.test(type)) problem = `its content type is ${type || "missing"}, not application/json`;
      else if (Number(response.headers["content-length"] ?? 0) > maxBytes) problem = `it is larger than ${maxBytes} bytes`;
      if (problem) return request.destroy(new PublicFetchError(problem));
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) request.destroy(new PublicFetchError(`it is larger than ${maxBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on("error", fail);
      response.on("end", () => {
        clearTimeout(deadline);
        try {
          const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          resolve({ body, cacheControl: response.headers["cache-control"] ?? null });
        } catch {
          reject(new PublicFetchError("it is not valid JSON"));
        }
      });
    });
    request.end();
  });
}
