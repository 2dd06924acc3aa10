import { signInMatches, type SignIn } from "@/lib/wallet/sign-in";
import { fromNow } from "@/lib/clock";
import { Field } from "./fields";

type Asker = { name: string; hosts: string[] };

/** "2026-11-25 18:00 UTC (in 2 hours)": a moment once, absolute and relative. */
function momentText(iso: string): string {
  const at = new Date(iso);
  return `${at
    .toISOString()
    .replace("T", " ")
    .replace(/:\d\d\.\d{3}Z$/, " UTC")} (${fromNow(at)})`;
}

/**
 * Under the headline: whether the site the message signs in to is one the asking client names. A sign-in written
 * for another site is how a phishing app borrows the person's signature, so a mismatch is a warning on the first screen.
 */
export function SignInCheck({ signIn, asker }: { signIn: SignIn; asker: Asker }) {
  if (signInMatches(signIn, asker.hosts)) {
    return (
      <p className="small">
        {signIn.domain} is a site of “{asker.name}”.
      </p>
    );
  }
  if (!asker.hosts.length) {
    return (
      <p className="small">
        “{asker.name}” names no website, so Agent Wallet cannot check that this sign-in to {signIn.domain} is its own. Sign only if you
        started it.
      </p>
    );
  }
  return (
    <p role="alert" className="danger-warning">
      {`This sign-in is for ${signIn.domain}, which is not a site of “${asker.name}” (${asker.hosts.join(", ")}). `}
      {`Signing could let it sign in to ${signIn.domain} as you. Reject unless you started this sign-in on ${signIn.domain}.`}
    </p>
  );
}

/** The sign-in's fields in words; the whole message stays shown below, as it is signed. */
export function SignInDetails({ signIn, walletAddress }: { signIn: SignIn; walletAddress: string }) {
  const otherAccount = signIn.address.toLowerCase() !== walletAddress.toLowerCase();
  return (
    <>
      <Field label="Sign in to">
        <strong>{signIn.domain}</strong>
      </Field>
      <Field label="Page">
        <span className="mono">{signIn.uri}</span>
      </Field>
      {signIn.statement && <Field label="Statement">{signIn.statement}</Field>}
      <Field label="Account">
        <span className="mono">{signIn.address}</span>
        {otherAccount && (
          <p role="alert" className="danger-warning">
            The message names another account than this wallet: the site would not accept the signature as this wallet&apos;s.
          </p>
        )}
      </Field>
      {signIn.chainId !== null && <Field label="Chain ID">{signIn.chainId}</Field>}
      <Field label="Sign-in valid until">{signIn.expirationTime ? momentText(signIn.expirationTime) : "no expiry named"}</Field>
    </>
  );
}
