// The person's address book: their names for addresses, shared by every grant. A name helps the person read
// an approval, a policy's allowlist or a limit ("Alice" beside 0x12…ab); it never changes what is signed, and
// the full address is always shown next to it. Saving and removing a name need a passkey (a stolen session
// must not be able to call an attacker's address "Savings").
import { z } from "zod";
import { getAddress } from "viem";
import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { systemClock, type Clock } from "@/lib/clock";
import { NotFoundError } from "@/lib/http/errors";

export const contactSchema = z.object({
  address: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address")
    .transform((address) => getAddress(address)),
  label: z.string().trim().min(1, "a name is required").max(60),
});
export type Contact = { address: string; label: string };

/** Names by lowercased address, for looking up any address however it is cased. */
export type ContactNames = Record<string, string>;

export async function listContacts(userId: string): Promise<Contact[]> {
  return db().addressBookEntry.findMany({ where: { userId }, orderBy: { label: "asc" }, select: { address: true, label: true } });
}

export async function contactNames(userId: string): Promise<ContactNames> {
  return Object.fromEntries((await listContacts(userId)).map((contact) => [contact.address.toLowerCase(), contact.label]));
}

/** Adds a name, or renames the address if it has one. */
export async function saveContact(userId: string, contact: Contact, clock: Clock = systemClock): Promise<void> {
  const now = clock();
  await db().addressBookEntry.upsert({
    where: { userId_address: { userId, address: contact.address } },
    create: { userId, ...contact, createdAt: now },
    update: { label: contact.label },
  });
  await recordAudit({ type: "address_book.saved", userId, data: { ...contact } }, clock);
}

export async function removeContact(userId: string, address: string, clock: Clock = systemClock): Promise<void> {
  const removed = await db().addressBookEntry.deleteMany({ where: { userId, address: getAddress(address) } });
  if (!removed.count) throw new NotFoundError("The address book entry");
  await recordAudit({ type: "address_book.removed", userId, data: { address: getAddress(address) } }, clock);
}
