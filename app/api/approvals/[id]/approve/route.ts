import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { serveDirectly } from "@/lib/http/direct-routes";
import { claimedSessionRoute } from "@/lib/routes/app-route";
import { approveRequest, decisionSchema, signatureSchema } from "@/lib/wallet/approvals";

// The session is confirmed in the approval's first round trip, with the challenge it spends.
export const POST = claimedSessionRoute(
  decisionSchema.extend({ assertion: authenticationResponseSchema, signature: signatureSchema }),
  (input, { session, params }) => approveRequest(session, params.id, input),
  { limit: "approve" },
);

// A person approving a burst of agents' requests: past Next's routing, as /mcp (docs/decisions/0011-mcp-beside-next.md).
serveDirectly("/api/approvals/[id]/approve", { POST });
