// Headers on every answer of the app: next.config.mjs sets them on what Next serves, server.ts on what it
// serves directly (/mcp). Plain JavaScript so that the production server can read next.config.mjs without
// loading Next's TypeScript compiler (25 MB of resident memory for a TypeScript config).

/** @type {{ key: string; value: string }[]} */
export const SECURITY_HEADERS = [
  // No page of the app may be framed: a framed consent or approval screen could be clickjacked.
  { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Referrer-Policy", value: "no-referrer" },
  { key: "X-Content-Type-Options", value: "nosniff" },
];
