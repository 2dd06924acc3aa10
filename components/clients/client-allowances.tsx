"use client";

import { callApi } from "@/components/browser/api";
import { approveWithPasskey, startAuthentication } from "@/components/browser/passkey";
import { Feedback, useAction } from "@/components/browser/use-action";
import type { RevocationToSign } from "@/lib/allowances/revocation-operation";
import type { ClientAllowance } from "@/lib/oauth/connected-clients";
import type { RevocationCeremony } from "./sign-revocations";
import { when } from "@/components/shared/when";

const BADGES: Record<string, string> = { active: "Live", suspended: "Paused", revoking: "Stopped", expired: "Expired", revoked: "Ended" };

function shortHash(hash: string) {
  return `${hash.slice(0, 10)}…${hash.slice(-8)}`;
}

/** A client's allowances: each limit in words, what is left this period, resets and expiry, every spend with its transaction. */
export function ClientAllowances({ allowances }: { allowances: ClientAllowance[] }) {
  const { busy, error, status, run } = useAction();

  const revoke = (allowance: ClientAllowance) =>
    run(async () => {
      const path = `/api/allowances/${encodeURIComponent(allowance.id)}/revoke`;
      const ceremony = await callApi<(RevocationCeremony & { revocation: RevocationToSign }) | (RevocationCeremony & { stored: true })>(
        `${path}/options`,
      );
      if ("stored" in ceremony) {
        // signed with the allowance: the tap approves sending it, and unseals nothing
        const assertion = await startAuthentication({ optionsJSON: ceremony.options });
        const { txHash } = await callApi<{ txHash: string }>(path, { assertion });
        return `Allowance disabled on chain (transaction ${txHash}).`;
      }
      const { signRevocations } = await import("./sign-revocations");
      const { assertion, signed } = await signRevocations(ceremony, [ceremony.revocation]);
      const { txHash } = await callApi<{ txHash: string }>(path, {
        assertion,
        nonce: ceremony.revocation.nonce,
        signature: signed[0].signature,
      });
      return `Allowance disabled on chain (transaction ${txHash}).`;
    });

  const resume = (allowance: ClientAllowance) =>
    run(async () => {
      const path = `/api/allowances/${encodeURIComponent(allowance.id)}/resume`;
      const assertion = await approveWithPasskey(`${path}/options`);
      await callApi(path, { assertion });
      return "Allowance resumed: it pays again without a tap.";
    });

  if (!allowances.length) return <Feedback error={error} status={status} />;
  return (
    <div className="stack">
      <Feedback error={error} status={status} />
      {allowances.map((allowance) => {
        const label = `Allowance of ${allowance.walletName} on ${allowance.chainName}`;
        return (
          <section key={allowance.id} className="card" aria-label={label}>
            <h3>
              {label}{" "}
              <span className={allowance.status === "active" ? "badge" : "badge revoked"}>
                {BADGES[allowance.status] ?? allowance.status}
              </span>
            </h3>
            {allowance.status === "suspended" && (
              <p className="error">
                Paused: {allowance.attention}. No payment is made from it until you resume it; an agent&apos;s payments come to you for
                approval meanwhile. Resume it if you made that change yourself, or revoke it.
              </p>
            )}
            {allowance.status === "revoking" && allowance.attention && (
              <p className="error">Its revocation is not sent again: {allowance.attention}. Revoke it to try once more.</p>
            )}
            {allowance.status === "revoking" &&
              !allowance.attention &&
              (allowance.revocationStored ? (
                <p className="error">
                  Stopped here: no payment is made from it. Agent Wallet is sending the revocation you signed with it, and sends it again
                  until the chain confirms it; revoke it to send it now.
                </p>
              ) : (
                <p className="error">Stopped here: no payment is made from it. It is still live on chain until you sign to disable it.</p>
              ))}
            <ul className="small">
              {allowance.limits.map((limit) => (
                <li key={limit.delegationHash}>
                  {limit.words}{" "}
                  {limit.unavailable ? (
                    <span>Left this period: unavailable (the chain cannot be read just now).</span>
                  ) : (
                    limit.left !== null && (
                      <span>
                        Left this period: {limit.left} {limit.symbol}, resets{" "}
                        {limit.resetsAt ? when(limit.resetsAt) : "at the period's start"}. {limit.transfersLeft} payment
                        {limit.transfersLeft === 1 ? "" : "s"} left in all.
                      </span>
                    )
                  )}
                </li>
              ))}
            </ul>
            <p className="small muted">
              Expires {when(allowance.expiresAt)} · above it: {allowance.overLimit === "ask" ? "asks you" : "refused"}
            </p>
            {allowance.spends.length > 0 && (
              <table className="small">
                <caption>Payments from this allowance</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Amount</th>
                    <th scope="col">To</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Transaction</th>
                  </tr>
                </thead>
                <tbody>
                  {allowance.spends.map((spend) => (
                    <tr key={spend.id}>
                      <td>{when(spend.at)}</td>
                      <td>{spend.amount}</td>
                      <td className="mono">{spend.recipient}</td>
                      <td>{spend.status}</td>
                      <td className="mono">
                        {spend.txHash &&
                          (allowance.explorerUrl ? (
                            <a href={`${allowance.explorerUrl.replace(/\/$/, "")}/tx/${spend.txHash}`} rel="noreferrer" target="_blank">
                              {shortHash(spend.txHash)}
                            </a>
                          ) : (
                            <span title={spend.txHash}>{spend.txHash}</span>
                          ))}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {allowance.status === "suspended" && (
              <button type="button" disabled={busy} onClick={() => void resume(allowance)}>
                Resume allowance
              </button>
            )}
            {allowance.status !== "revoked" && allowance.status !== "expired" && (
              <button type="button" className="danger" disabled={busy} onClick={() => void revoke(allowance)}>
                Revoke allowance
              </button>
            )}
          </section>
        );
      })}
    </div>
  );
}
