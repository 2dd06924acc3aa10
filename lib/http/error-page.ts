import { PALETTE_CSS } from "./palette";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * The app's look for a page Next does not render: its colours (light and dark), type, header and column. Only the
 * few rules such a page uses, beside app/globals.css's of the same names.
 */
const PAGE_CSS = `${PALETTE_CSS}
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;line-height:1.5;
  color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
.app-header{padding:.75rem 1rem;border-bottom:1px solid var(--line);background:var(--surface)}
.app-header a{color:var(--fg);text-decoration:none;font-weight:700}
main{max-width:44rem;margin:0 auto;padding:1.5rem 1rem 3rem}
h1{font-size:1.5rem;margin:0 0 1rem}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}`;

/**
 * A standalone HTML error page in the app's look, for errors that must not redirect. `back`: a link the person may
 * follow to return to the application, with the error for it — never followed automatically. Either way a link
 * leads into Agent Wallet. `headers`: extra response headers (a 429's Retry-After).
 */
export function errorPage(
  title: string,
  message: string,
  status: number,
  options: { back?: { href: string; text: string }; headers?: Record<string, string> } = {},
): Response {
  const { back, headers = {} } = options;
  // this app's own home, on the origin that served the page
  const home = "/";
  const link = back && `<a href="${escapeHtml(back.href)}" rel="noreferrer">${escapeHtml(back.text)}</a>`;
  const next = link
    ? `<p>Agent Wallet did not send you anywhere. If you came from this application, you can go back: ${link}</p>`
    : "<p>Return to the application and start again.</p>";
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Agent Wallet</title>
<style>${PAGE_CSS}</style>
</head><body><header class="app-header"><nav aria-label="Main"><a href="${home}">Agent Wallet</a></nav></header>
<main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>
${next}<p><a href="${home}">Open Agent Wallet</a></p></main></body></html>`;
  return new Response(html, {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "X-Frame-Options": "DENY",
      ...headers,
    },
  });
}
