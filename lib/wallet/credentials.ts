import { db } from "@/lib/db";
import type { AgentContext } from "@/lib/oauth/bearer";

export type CredentialKind = "evm" | "evm_watch";

/** The credentials in an agent's grant, as the agent may see them. */
export async function listGrantedCredentials(agent: AgentContext) {
  const modes = new Map(agent.credentials.map((entry) => [entry.credentialId, entry.mode]));
  const rows = await db().credential.findMany({
    where: { id: { in: [...modes.keys()] }, userId: agent.userId },
    select: { id: true, name: true, kind: true, address: true },
    orderBy: { createdAt: "asc" },
  });
  return rows.map((row) => ({ ...row, kind: row.kind as CredentialKind, mode: modes.get(row.id)! }));
}
