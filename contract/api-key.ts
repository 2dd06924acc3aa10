// Apart from the schemas (and zod), so the CLI's help can name it without loading them.
/** The prefix of a personal API key, accepted as a bearer on /mcp. */
export const API_KEY_PREFIX = "svc_live_";
