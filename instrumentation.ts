// Next.js calls register() once when a server process starts.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startSweeping } = await import("@/lib/db/sweep");
  startSweeping();
  const { startResendingRevocations } = await import("@/lib/allowances/resend");
  startResendingRevocations();
  const { startReconcilingPayments } = await import("@/lib/allowances/reconcile");
  startReconcilingPayments();
}
