"use client";

import { useEffect, useRef, useState } from "react";
import { useRouter } from "next/navigation";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/browser";
import { callApi } from "@/components/browser/api";
import { Feedback, useAction } from "@/components/browser/use-action";
import { AllowancePicker, loadAllowanceSigning, newAllowanceForm, reviewedAllowance } from "@/components/grants/allowance-form";
import type { AllowanceChain, AllowanceReview } from "@/components/grants/allowance-types";
import type { Contact } from "@/lib/wallet/address-book";

/** Choosing the allowance mode for a wallet of an existing grant: the consent's allowance picker, and one passkey tap. */
export function GrantAllowance({
  grantId,
  clientName,
  credential,
  chains,
  contacts,
}: {
  grantId: string;
  clientName: string;
  credential: { id: string; name: string; address: string };
  chains: AllowanceChain[];
  contacts: Contact[];
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
      <p className="small muted">
        A new allowance replaces the one {credential.name} may already have for {clientName} on that chain: the old one stops and is
        disabled on chain, so only one pays at a time.
      </p>
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
        />
      )}
      <button type="button" className="primary" disabled={busy} onClick={() => void sign()}>
        Sign allowance for {credential.name} with passkey
      </button>
      <Feedback error={error} />
    </details>
  );
}
