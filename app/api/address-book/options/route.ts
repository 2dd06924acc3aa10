import { appRoute } from "@/lib/routes/app-route";
import { guarded, guardedOptions } from "@/lib/auth/step-up";
import { contactSchema } from "@/lib/wallet/address-book";

/** The passkey challenge for naming an address (`label`) or removing its name (`label` null). */
export const POST = appRoute(contactSchema.extend({ label: contactSchema.shape.label.nullable() }), ({ address, label }, { user }) =>
  guardedOptions(user.id, guarded.changeContact(address, label)),
);
