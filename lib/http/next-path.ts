/** Where to go after signing in: a path on this app only, never another site. */
export function safeNextPath(value: string | undefined | null, fallback = "/wallets"): string {
  if (!value || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\") || /[\u0000-\u001f]/.test(value))
    return fallback;
  return value;
}
