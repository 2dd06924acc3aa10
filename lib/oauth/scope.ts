import { SCOPES, type Scope } from "./metadata";
import { InvalidScopeError } from "./errors";

/**
 * Parses a space-separated scope string into known, de-duplicated scopes. An
 * absent or empty scope means the default (RFC 6749 §3.3).
 */
export function parseScope(value: string | null | undefined, fallback = "mcp"): Scope[] {
  const words = (value?.trim() ? value : fallback).split(" ").filter(Boolean);
  const unknown = words.filter((word) => !(SCOPES as readonly string[]).includes(word));
  if (unknown.length)
    throw new InvalidScopeError(`Unknown scope ${unknown.map((w) => JSON.stringify(w)).join(", ")}; supported: ${SCOPES.join(" ")}`);
  const scopes = [...new Set(words)] as Scope[];
  if (!scopes.includes("mcp")) throw new InvalidScopeError("scope must include mcp");
  return SCOPES.filter((scope) => scopes.includes(scope));
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(" ");
}

export function hasScope(scope: string, wanted: Scope): boolean {
  return scope.split(" ").includes(wanted);
}
