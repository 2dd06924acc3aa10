import { z } from "zod";
import { db } from "@/lib/db";
import { recordAudit } from "@/lib/audit";
import { stepUpOptions } from "@/lib/auth/step-up";
import { systemClock, type Clock } from "@/lib/clock";
import { NotFoundError } from "@/lib/http/errors";

export const exportReasonSchema = z.enum(["key", "recovery-kit"]);

/**
 * Taking a wallet key out of Agent Wallet (shown in the page, or as a recovery kit): a challenge
 * bound to this wallet that only the passkeys that sealed it may answer. The browser unseals with
 * that assertion's PRF output and the key never comes back; the request itself is audited.
 */
export async function exportOptions(
  userId: string,
  credentialId: string,
  reason: z.infer<typeof exportReasonSchema>,
  clock: Clock = systemClock,
) {
  const credential = await db().credential.findFirst({
    where: { id: credentialId, userId, kind: "evm" },
    include: { seals: { select: { passkeyId: true, ciphertext: true, iv: true, prfSalt: true } } },
  });
  if (!credential) throw new NotFoundError("The wallet");
  const passkeys = await db().passkey.findMany({ where: { userId }, select: { id: true, transports: true } });
  const transports = new Map(passkeys.map((passkey) => [passkey.id, JSON.parse(passkey.transports) as string[]]));
  const seals = credential.seals.map((seal) => ({ ...seal, transports: transports.get(seal.passkeyId) ?? [] }));
  const options = await stepUpOptions(userId, "export", credentialId, { reason }, { allow: seals.map((seal) => seal.passkeyId) }, clock);
  await recordAudit({ type: "credential.export_requested", userId, credentialId, data: { reason, address: credential.address } }, clock);
  return { options, address: credential.address, seals };
}
