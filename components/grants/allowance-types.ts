// The allowance form's types, apart from both the form (allowance-form.tsx) and the picker it loads when first shown
// (allowance-picker.tsx): each imports them from here, so neither imports the other back.
import type { PreparedAllowance } from "@/lib/allowances/ceremony";

/** A chain that offers allowances (it has the Delegation Framework). */
export type AllowanceChain = { id: number; name: string; symbol: string };

/** The allowance form as the person fills it in, in their own units. */
export type AllowanceForm = {
  chainId: number;
  coin: string;
  /**
   * `perPayment`: with any payee, the most one payment may be; `float`: with any payee, optional, what the agent's
   * account is kept topped up to so that payments it covers are answered at once (decision 0038)
   */
  tokens: { address: string; amount: string; perPayment: string; float: string }[];
  recipients: string;
  /** "listed" (the default): only the recipients named; "any": anyone, each payment at most its token's `perPayment` */
  payees: "listed" | "any";
  period: "hour" | "day" | "week";
  expiresInDays: string;
  transactions: string;
  overLimit: "ask" | "refuse";
};

/**
 * What the server prepared, as this page decoded it from the fields to sign; or why nothing will be signed. `summary`
 * says it in the person's words, `words` are the exact terms.
 */
export type AllowanceReview =
  | { prepared: PreparedAllowance; summary: string; /** for any payee, set apart */ warning: string | null; words: string[] }
  | { error: string };
