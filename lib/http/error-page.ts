function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * A small standalone HTML error page, for errors that must not redirect. `back`: a link the person may follow
 * to return to the application, with the error for it — never followed automatically. `headers`: extra
 * response headers (a 429's Retry-After).
 */
export function errorPage(
  title: string,
  message: string,
  status: number,
  options: { back?: { href: string; text: string }; headers?: Record<string, string> } = {},
): Response {
  const { back, headers = {} } = options;
  const link = back && `<a href="${escapeHtml(back.href)}" rel="noreferrer">${escapeHtml(back.text)}</a>`;
  const next = link
    ? `<p>Agent Wallet did not send you anywhere. If you came from this application, you can go back: ${link}</p>`
    : "<p>Return to the application and start again.</p>";
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Agent Wallet</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}h1{font-size:1.4rem}</style>
</head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>
${next}</main></body></html>`;
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
