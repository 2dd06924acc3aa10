import type { Page } from "playwright-core";

// Source text, not a function: tsx's transform would wrap a function's inner
// helpers in a __name() call that does not exist in the page.
const PRF_IN_PAGE = `async ({ passkeyId, salt }) => {
  function fromB64(text) {
    return Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4)), (c) => c.charCodeAt(0));
  }
  const credential = await navigator.credentials.get({
    publicKey: {
      challenge: crypto.getRandomValues(new Uint8Array(32)),
      rpId: location.hostname,
      allowCredentials: [{ type: "public-key", id: fromB64(passkeyId) }],
      userVerification: "required",
      extensions: { prf: { eval: { first: fromB64(salt) } } },
    },
  });
  const bytes = new Uint8Array(credential.getClientExtensionResults().prf.results.first);
  return btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
}`;

/**
 * Asks the page's passkey for its PRF output over `salt` (both base64url), the
 * way the app's approval page does. Tests use it to prove that a stored seal
 * opens with the same passkey; the app itself never sends this value anywhere.
 */
export async function prfOutputInPage(page: Page, passkeyId: string, salt: string): Promise<string> {
  return page.evaluate(`(${PRF_IN_PAGE})(${JSON.stringify({ passkeyId, salt })})`) as Promise<string>;
}
