import { requireApiUser } from "@/lib/auth/session";
import { exportAuditEvents, parseAuditQuery } from "@/lib/audit/query";
import { AppError } from "@/lib/http/errors";
import { errorResponse, NO_STORE } from "@/lib/http/respond";

export const dynamic = "force-dynamic";

/**
 * GET /api/audit/export?type=&client=&credential=&from=&to=: the signed-in
 * person's events (the same ones /audit shows for these filters) as JSON
 * Lines, oldest first, streamed batch by batch.
 */
export async function GET(request: Request): Promise<Response> {
  try {
    const user = await requireApiUser(request);
    const query = parseAuditQuery(new URL(request.url).searchParams);
    if (query.errors.length) throw new AppError("invalid_input", query.errors.join(" "), 400);

    const lines = exportAuditEvents(user.id, query.filters);
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done } = await lines.next();
          if (done) controller.close();
          else controller.enqueue(encoder.encode(value));
        } catch (error) {
          console.error("audit export failed:", error instanceof Error ? error.message : "non-error thrown");
          controller.error(error);
        }
      },
      async cancel() {
        await lines.return(undefined);
      },
    });
    const day = new Date().toISOString().slice(0, 10);
    return new Response(body, {
      status: 200,
      headers: {
        ...NO_STORE,
        "Content-Type": "application/x-ndjson; charset=utf-8",
        "Content-Disposition": `attachment; filename="agent-wallet-audit-${day}.jsonl"`,
      },
    });
  } catch (error) {
    return errorResponse(error);
  }
}
