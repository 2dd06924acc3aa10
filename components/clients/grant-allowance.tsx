"use client";

import { useEffect, useRef, useState } from "react";
import { useRouter } from "next/navigation";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi } from "@/components/browser/api";
import { Feedback, useAction } from "@/components/browser/use-action";
import { AllowancePicker, loadAllowanceSigning, newAllowanceForm, reviewedAllowance } from "@/components/grants/allowance-form";
import type { AllowanceChain, AllowanceReview } from "@/components/grants/allowance-types";
import type { Contact } from "@/lib/wallet/address-book";
import type { PickableToken } from "@/lib/wallet/policy-presets";
import type { ClientAllowance } from "@/lib/oauth/connected-clients";

/** Choosing the allowance mode for a wallet of an existing grant: the consent's allowance picker, and one passkey tap. */
export function GrantAllowance({
  grantId,
  clientName,
  credential,
  live,
  chains,
  contacts,
  tokens,
}: {
  grantId: string;
  clientName: string;
  credential: { id: string; name: string; address: string };
  /** the wallet's allowances for this client that the chain may still redeem */
  live: ClientAllowance[];
  chains: AllowanceChain[];
  contacts: Contact[];
  /** the tokens the wallet may hold, offered by name */
  tokens: PickableToken[];
}) {
  const router = useRouter();
  const { busy, error, run } = useAction();
  const [form, setForm] = useState(() => newAllowanceForm(chains));
  const [review, setReview] = useState<AllowanceReview>();
  // The picker (and its code) is rendered once the person opens this, not with the page; a tap before the page
  // hydrated opened it unheard.
  const [opened, setOpened] = useState(false);
  const details = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    if (details.current?.open) setOpened(true);
  }, []);
  const path = `/api/grants/${encodeURIComponent(grantId)}/allowance`;

  const sign = () =>
    run(async () => {
      const prepared = reviewedAllowance(review);
      const body = { credential_id: credential.id };
      const { signReviewedAllowance } = await loadAllowanceSigning();
      const { assertion, allowance } = await signReviewedAllowance(prepared, (binding) =>
        callApi<PublicKeyCredentialRequestOptionsJSON>(`${path}/options`, { ...body, allowance: binding }),
      );
      await callApi(path, { ...body, allowance, assertion });
      setReview(undefined);
      router.refresh();
    });

  return (
    <details
      ref={details}
      onToggle={(event) => {
        if (event.currentTarget.open) setOpened(true);
      }}
    >
      <summary>
        Give {credential.name} an allowance for {clientName}
      </summary>
      {live.map((given) => {
        const until = given.revocationStored
          ? "until the chain confirms the disabling Agent Wallet sends for it"
          : "until you sign its disabling with Revoke allowance";
        return (
          <p key={given.id} className="error">
            {`${credential.name} already has an allowance for ${clientName} on ${given.chainName}: ${given.summary} `}
            {`A new one on ${given.chainName} stops it here, but ${until}, both are live on chain: if Agent Wallet's server `}
            {`were compromised, the most it could pay from ${credential.name} is their sum, up to ${given.caps} plus the new `}
            one&apos;s cap.
          </p>
        );
      })}
      {opened && (
        <AllowancePicker
          credential={credential}
          scope={`${grantId}-${credential.id}`}
          chains={chains}
          form={form}
          review={review}
          onChange={(next, nextReview) => {
            setForm(next);
            setReview(nextReview);
          }}
          contacts={contacts}
          tokens={tokens}
        />
      )}
      <button type="button" className="primary" disabled={busy} onClick={() => void sign()}>
        Sign allowance for {credential.name} with passkey
      </button>
      <Feedback error={error} />
    </details>
  );
}
