/**
 * Headers on every answer of the app: next.config.ts sets them on what Next serves, server.ts on what it serves
 * directly (/mcp).
 */
export const SECURITY_HEADERS = [
  // No page of the app may be framed: a framed consent or approval screen could be clickjacked.
  { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Referrer-Policy", value: "no-referrer" },
  { key: "X-Content-Type-Options", value: "nosniff" },
];
