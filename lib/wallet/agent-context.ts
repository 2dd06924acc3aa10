import type { ApprovalMode, CredentialKind } from "@/contract";

/**
 * Who is calling /mcp and with what authority: exactly one grant. The bearer
 * check (lib/oauth/bearer.ts) produces it; the wallet's tools only read it.
 */
export type AgentContext = {
  userId: string;
  /** the person's sign-in email, from the same query (list_credentials names the account by it) */
  userEmail: string;
  clientId: string;
  clientName: string;
  grantId: string;
  via: "access_token" | "api_key";
  /** The grant's credentials, oldest first, as the bearer check loaded them. */
  credentials: { credentialId: string; mode: ApprovalMode; name: string; kind: CredentialKind; address: string }[];
};
