"use client";

import type { Contact } from "@/lib/wallet/address-book";

/** One button per address-book entry not yet in `recipients` (one address per line): a click adds it. */
export function ContactPicks({
  contacts,
  recipients,
  label,
  onChange,
}: {
  contacts: Contact[];
  recipients: string;
  label: (contact: Contact) => string;
  onChange: (recipients: string) => void;
}) {
  const listed = recipients.toLowerCase();
  const unlisted = contacts.filter((contact) => !listed.includes(contact.address.toLowerCase()));
  if (!unlisted.length) return null;
  return (
    <div className="contacts">
      {unlisted.map((contact) => (
        <button
          key={contact.address}
          type="button"
          className="small"
          onClick={() => onChange([recipients.trim(), contact.address].filter(Boolean).join("\n"))}
        >
          {label(contact)}
        </button>
      ))}
    </div>
  );
}
