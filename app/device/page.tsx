import { currentUser } from "@/lib/auth/session";
import { ConsentRequestError, loadAuthorizationRequest } from "@/lib/oauth/consent";
import { AuthPanel } from "@/components/auth/auth-panel";
import { AppHeader } from "@/components/nav/app-header";
import { DeadEnd } from "@/components/nav/dead-end";
import { DeviceCodeForm } from "@/components/device/device-code-form";

const DECIDED: Record<string, [string, string]> = {
  approved: ["Device connected", "Return to your device: it continues by itself. You can close this page."],
  denied: ["Device not connected", "You denied the request. The device was told; start again there if you change your mind."],
  expired: ["This request expired", "Codes last 10 minutes. Start again on your device."],
  client_revoked: ["Application revoked", "This application's access was revoked. It has to register again."],
};

// RFC 8628's verification URI: the person types the code a terminal or agent shows (or arrives with it from a
// link or QR code), signs in, confirms the code, and decides on the consent screen; afterwards they land here.
export default async function DevicePage({ searchParams }: { searchParams: Promise<{ user_code?: string; request?: string }> }) {
  const { user_code: userCode = "", request: requestId } = await searchParams;
  if (requestId) {
    let status = "expired";
    try {
      status = (await loadAuthorizationRequest(requestId)).status;
    } catch (error) {
      if (!(error instanceof ConsentRequestError)) throw error;
    }
    const [title, message] = DECIDED[status] ?? ["Waiting for your decision", "Finish on the consent screen."];
    return (
      <DeadEnd title={title}>
        <p>{message}</p>
      </DeadEnd>
    );
  }

  const user = await currentUser();
  const next = `/device${userCode ? `?user_code=${encodeURIComponent(userCode)}` : ""}`;
  return (
    <>
      <AppHeader email={user?.email ?? null} />
      <main>
        <h1>Connect a device</h1>
        <p>
          Enter the code your terminal or agent shows. <strong>Only continue if you started this sign-in yourself, just now:</strong>{" "}
          someone who sends you a code is asking for your wallet.
        </p>
        {user ? (
          <>
            <p className="muted small">Signed in as {user.email}</p>
            <DeviceCodeForm initialCode={userCode} />
          </>
        ) : (
          <>
            <p>Sign in, or create an account, first.</p>
            <AuthPanel next={next} />
          </>
        )}
      </main>
    </>
  );
}
