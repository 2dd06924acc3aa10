"use client";

import { useState } from "react";
import { callApi } from "@/components/browser/api";
import { approveWithPasskey } from "@/components/browser/passkey";
import { Feedback, useAction } from "@/components/browser/use-action";
import type { Contact } from "@/lib/wallet/address-book";

/** The person's names for addresses: each save or removal approved with a passkey. */
export function AddressBook({ contacts }: { contacts: Contact[] }) {
  const { busy, error, status, run } = useAction();
  const [label, setLabel] = useState("");
  const [address, setAddress] = useState("");

  const change = (contact: { address: string; label: string | null }, done: string) =>
    run(async () => {
      const assertion = await approveWithPasskey("/api/address-book/options", contact);
      if (contact.label === null) await callApi("/api/address-book", { address: contact.address, assertion }, "DELETE");
      else await callApi("/api/address-book", { ...contact, assertion }, "PUT");
      return done;
    });

  return (
    <div className="stack">
      <p className="muted small">
        Your names for addresses, shown beside them on approvals and spending limits. The full address is always shown too.
      </p>
      {contacts.length ? (
        <ul className="rows" aria-label="Address book">
          {contacts.map((contact) => (
            <li key={contact.address} className="row" aria-label={contact.label}>
              <div>
                <strong>{contact.label}</strong>
                <div className="mono small">{contact.address}</div>
              </div>
              <button
                type="button"
                disabled={busy}
                onClick={() => void change({ address: contact.address, label: null }, `${contact.label} removed from the address book`)}
              >
                Remove {contact.label}
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">No names yet.</p>
      )}
      <form
        className="card"
        onSubmit={(event) => {
          event.preventDefault();
          void change({ address: address.trim(), label: label.trim() }, `${label.trim()} saved`).then((saved) => {
            if (!saved) return;
            setLabel("");
            setAddress("");
          });
        }}
      >
        <label htmlFor="contact-name">Contact name</label>
        <input id="contact-name" required maxLength={60} value={label} onChange={(event) => setLabel(event.target.value)} />
        <label htmlFor="contact-address">Contact address</label>
        <input
          id="contact-address"
          required
          className="mono"
          placeholder="0x…"
          value={address}
          onChange={(event) => setAddress(event.target.value)}
        />
        <div>
          <button type="submit" disabled={busy}>
            Save contact
          </button>
        </div>
      </form>
      <Feedback error={error} status={status} />
    </div>
  );
}
