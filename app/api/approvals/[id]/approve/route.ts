import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { serveDirectly } from "@/lib/http/direct-routes";
import { appRoute } from "@/lib/routes/app-route";
import { approveRequest, decisionSchema, signatureSchema } from "@/lib/wallet/approvals";

export const POST = appRoute(
  decisionSchema.extend({ assertion: authenticationResponseSchema, signature: signatureSchema }),
  (input, { user, params }) => approveRequest(user.id, params.id, input),
  { limit: "approve" },
);

// A person approving a burst of agents' requests: past Next's routing, as /mcp (docs/decisions/0011-mcp-beside-next.md).
serveDirectly("/api/approvals/[id]/approve", { POST });
