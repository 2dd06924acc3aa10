// Shape limits on request input that every protocol shares; each route answers a violation in its own format.
/** How deeply JSON from a request body may nest; nothing the service accepts comes near it. */
export const MAX_JSON_DEPTH = 32;

/**
 * The longest Authorization header read (/mcp's bearer, and refused above it on /oauth/*): our access tokens are
 * under 1 KiB, API keys under 100 bytes.
 */
export const MAX_AUTHORIZATION_HEADER = 4096;

/** Why a request body is not acceptable JSON; each protocol answers it in its own format. */
export class JsonBodyError extends Error {}

/**
 * JSON.parse for request bodies, refusing nesting deeper than MAX_JSON_DEPTH before anything is built: one pass
 * over the text counting brackets outside strings, so a deep body costs no allocation and no recursion later.
 */
export function parseJsonBody(text: string): unknown {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index++; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) throw new JsonBodyError(`JSON may nest at most ${MAX_JSON_DEPTH} levels deep`);
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new JsonBodyError("The body is not JSON");
  }
}
