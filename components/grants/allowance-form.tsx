"use client";

// The allowance form's state and what the person reviewed: what a page needs before anyone chooses the allowance
// mode. The picker itself and the signing code (allowance-picker.tsx, with the Delegation Framework's) load then.
import dynamic from "next/dynamic";
import type { PreparedAllowance } from "@/lib/allowances/ceremony";
import type { AllowanceChain, AllowanceForm, AllowanceReview } from "./allowance-types";

/** The picker, loaded when it is first shown: once the person chooses the allowance mode for a wallet. */
export const AllowancePicker = dynamic(() => import("./allowance-picker").then((picker) => picker.AllowancePicker), {
  loading: () => <p className="muted small">Loading the allowance form…</p>,
});

/** The one tap's signing code: by then the picker has loaded it, since only what it stated is signed. */
export const loadAllowanceSigning = () => import("./allowance-picker");

export function newAllowanceForm(chains: AllowanceChain[]): AllowanceForm {
  return {
    chainId: chains[0]?.id ?? 0,
    coin: "",
    tokens: [],
    recipients: "",
    payees: "listed",
    period: "day",
    expiresInDays: "7",
    transactions: "10",
    overLimit: "ask",
  };
}

/** What was reviewed and may be signed; anything else is refused before any tap. */
export function reviewedAllowance(review: AllowanceReview | undefined): PreparedAllowance {
  if (!review || "error" in review) throw new Error("Review the allowance first: you approve only what the page has stated.");
  return review.prepared;
}
