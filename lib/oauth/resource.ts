import { config } from "@/lib/config";
import { InvalidTargetError } from "./errors";

/**
 * RFC 8707 `resource` values of an authorization or token request: none, or exactly the one
 * protected resource there is, `{base_url}/mcp`; anything else is `invalid_target`.
 */
export function checkResource(values: readonly string[]): void {
  if (values.length > 1) throw new InvalidTargetError("Only one resource may be requested");
  const { mcpResource } = config();
  if (values.length === 1 && values[0] !== mcpResource) throw new InvalidTargetError(`resource must be ${mcpResource}`);
}
