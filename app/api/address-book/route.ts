import { appRoute } from "@/lib/routes/app-route";
import { authenticationResponseSchema } from "@/lib/auth/passkeys";
import { guarded, withStepUp } from "@/lib/auth/step-up";
import { contactSchema, removeContact, saveContact } from "@/lib/wallet/address-book";

const assertion = authenticationResponseSchema.optional();

/** Names an address (or renames it), approved with a passkey bound to the address and the name. */
export const PUT = appRoute(contactSchema.extend({ assertion }), ({ assertion, ...contact }, { user }) =>
  withStepUp(user.id, guarded.changeContact(contact.address, contact.label), assertion, () => saveContact(user.id, contact)),
);

export const DELETE = appRoute(contactSchema.pick({ address: true }).extend({ assertion }), ({ address, assertion }, { user }) =>
  withStepUp(user.id, guarded.changeContact(address, null), assertion, () => removeContact(user.id, address)),
);
