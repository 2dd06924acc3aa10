"use client";

import { callApi } from "@/components/browser/api";
import { approveWithPasskey, startAuthentication } from "@/components/browser/passkey";
import { Feedback, useAction } from "@/components/browser/use-action";
import type { RevocationToSign } from "@/lib/allowances/revocation-operation";
import type { ClientAllowance } from "@/lib/oauth/connected-clients";
import type { RevocationCeremony } from "./sign-revocations";
import { when } from "@/components/shared/when";
import { AnyPayeeWarning } from "@/components/grants/any-payee-warning";
import { atUtc } from "@/lib/clock";

const BADGES: Record<string, string> = { active: "Live", suspended: "Paused", revoking: "Stopped", expired: "Expired", revoked: "Ended" };

function shortHash(hash: string) {
  return `${hash.slice(0, 10)}…${hash.slice(-8)}`;
}

type Limit = ClientAllowance["limits"][number];

/**
 * What is left of a limit, in two sentences: the amount until its period resets, then the payments, which are counted
 * over the allowance's whole life and never come back. The reset's "today" is the reader's clock, which may differ from
 * the server's render right around midnight UTC.
 */
function LeftWords({ limit }: { limit: Limit }) {
  if (limit.left === null || !limit.resetsAt) return null;
  const payments = limit.transfersLeft ?? 0;
  // with a float: what of it the agent's account already holds (decision 0038)
  const held = limit.inAgentAccount === null ? "" : `, of which ${limit.inAgentAccount} ${limit.symbol} already in the agent's account`;
  return (
    <span suppressHydrationWarning>
      {limit.left} {limit.symbol} left until it resets {atUtc(new Date(limit.resetsAt), new Date())}
      {held}. {payments} payment
      {payments === 1 ? "" : "s"} left in all (this count never resets).
    </span>
  );
}

/**
 * A client's allowances: each in the consent card's words with its exact signed terms one tap away, what is left, its
 * expiry, every spend with its transaction; ended ones stay listed, with their payments, as history.
 */
/**
 * The allowance card's name, "Allowance of Main on Base": with "(2 of 3)" after it when the client has several of one
 * wallet on one chain (a replaced one stays listed), so that every landmark on the page has a name of its own.
 */
function landmarkName(allowances: ClientAllowance[], index: number): string {
  const name = (allowance: ClientAllowance) => `Allowance of ${allowance.walletName} on ${allowance.chainName}`;
  const same = allowances.filter((allowance) => name(allowance) === name(allowances[index]));
  const label = name(allowances[index]);
  return same.length > 1 ? `${label} (${same.indexOf(allowances[index]) + 1} of ${same.length})` : label;
}

/** A revocation's answer; no transaction when every delegation was disabled on chain already. */
const disabledWords = ({ txHash }: { txHash: string | null }) =>
  txHash ? `Allowance disabled on chain (transaction ${txHash}).` : "Allowance disabled on chain.";

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
        return disabledWords(await callApi<{ txHash: string | null }>(path, { assertion }));
      }
      const { signRevocations } = await import("./sign-revocations");
      const { assertion, signed } = await signRevocations(ceremony, [ceremony.revocation]);
      return disabledWords(
        await callApi<{ txHash: string | null }>(path, { assertion, nonce: ceremony.revocation.nonce, signature: signed[0].signature }),
      );
    });

  const resume = (allowance: ClientAllowance) =>
    run(async () => {
      const path = `/api/allowances/${encodeURIComponent(allowance.id)}/resume`;
      const assertion = await approveWithPasskey(`${path}/options`);
      await callApi(path, { assertion });
      return "Allowance resumed: it pays again without a tap.";
    });

  const takeBack = (allowance: ClientAllowance) =>
    run(async () => {
      const path = `/api/allowances/${encodeURIComponent(allowance.id)}/return`;
      const assertion = await approveWithPasskey(`${path}/options`);
      await callApi(path, { assertion });
      return "Sent back to your wallet. The allowance goes on: its next payment from the agent's account fills it again.";
    });

  if (!allowances.length) return <Feedback error={error} status={status} />;
  return (
    <div className="stack">
      <Feedback error={error} status={status} />
      {allowances.map((allowance, index) => {
        const label = landmarkName(allowances, index);
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
              <p className="error">
                Its revocation is not sent again: {allowance.attention}.{" "}
                {allowance.relayable
                  ? "Revoke it to try once more."
                  : "No payment is made from it; to disable it on chain, send its disabling from the wallet itself, with coin of its own."}
              </p>
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
            {allowance.summary && <p className="allowance-summary">{allowance.summary}</p>}
            <AnyPayeeWarning warning={allowance.warning} />
            {allowance.agentKey && (
              <p className="small">
                Spent only by the agent&apos;s own key, address <span className="mono">{allowance.agentKey}</span>: Agent Wallet holds no
                key that can, and the agent pays its own network fees.
              </p>
            )}
            {allowance.slices.map((slice) => (
              <div key={slice.id} className="small allowance-slice">
                <p>
                  Passed on by the agent to the key <span className="mono">{slice.delegate}</span>, within this allowance (revoking it stops
                  this too):
                </p>
                <ul>
                  {slice.words.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
              </div>
            ))}
            {allowance.limits.some((limit) => limit.unavailable || limit.left !== null) && (
              <ul className="small">
                {allowance.limits.map((limit) => (
                  <li key={limit.delegationHash}>
                    {limit.unavailable ? "Left this period: unavailable (the chain cannot be read just now)." : <LeftWords limit={limit} />}
                  </li>
                ))}
              </ul>
            )}
            <p className="small muted">
              Expires {when(allowance.expiresAt)} · above it: {allowance.overLimit === "ask" ? "asks you" : "refused"}
            </p>
            <details className="small">
              <summary>The exact terms you signed</summary>
              <ul>
                {allowance.limits.map((limit) => (
                  <li key={limit.delegationHash}>{limit.words}</li>
                ))}
              </ul>
            </details>
            {allowance.spends.length > 0 && (
              <table className="small stacked-table">
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
                      <td data-label="When">{when(spend.at)}</td>
                      <td data-label="Amount">{spend.amount}</td>
                      <td data-label="To" className="mono">
                        {spend.recipient}
                      </td>
                      <td data-label="Outcome">{spend.status}</td>
                      <td data-label="Transaction" className="mono">
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
            {allowance.status === "active" && allowance.limits.some((limit) => Number(limit.inAgentAccount ?? 0) > 0) && (
              <button type="button" disabled={busy} onClick={() => void takeBack(allowance)}>
                Return what the agent&apos;s account holds
              </button>
            )}
            {allowance.status !== "revoked" && allowance.status !== "expired" && allowance.relayable && (
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
