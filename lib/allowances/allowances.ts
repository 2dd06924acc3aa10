// Creating an allowance from what the person signed, and reading what is left of it. The signatures are checked
// here as the DelegationManager will check them, and every delegation must decode to exactly an allowance's shape
// (lib/allowances/caveats.ts), so what is stored is what the approval page described.
import { getAddress, type Address, type Hex, type SignedAuthorization, type TypedDataDefinition } from "viem";
import { recoverAuthorizationAddress } from "viem/utils";
import { ERC20PeriodTransferEnforcer, LimitedCallsEnforcer, NativeTokenPeriodTransferEnforcer } from "@metamask/delegation-abis";
import { recordAudit } from "@/lib/audit";
import { randomId } from "@/lib/crypto";
import { db, selectRows, type Tx } from "@/lib/db";
import { PreparedSelect, sqliteDateTime, storedTime } from "@/lib/db/prepared";
import { rowsLater, type TransactionScript } from "@/lib/db/transaction-script";
import type { Allowance as AllowanceRow, AllowanceDelegation } from "@/lib/generated/prisma/client";
import type { Clock } from "@/lib/clock";
import { AppError, NotFoundError } from "@/lib/http/errors";
import { allowanceFramework, chainById, ChainError, onChain } from "@/lib/wallet/chains";
import { recoverTypedDataSigner } from "@/lib/wallet/signer-recovery";
import {
  delegationFromJson,
  delegationToJson,
  delegationTypedData,
  MAX_DELEGATIONS,
  MAX_EXPIRY_DAYS,
  DAY,
  readDelegation,
  type Delegation,
  type DelegationJson,
  type DelegationMeaning,
  type OverLimit,
  type PerPayment,
} from "./caveats";
import { delegateAccount } from "./delegate-key";
import { delegationHash } from "./delegation-encoding";
import type { Framework } from "@/lib/wallet/delegation-framework";
import { delegatedCode } from "./guard";
import { relay, RelayBudgetError, RelayerLowError } from "./relay";
import { operationTypedData, presignedRevocation } from "./revocation-operation";

export class AllowanceError extends AppError {
  constructor(message: string, status = 400) {
    super("invalid_allowance", message, status);
  }
}

/** The framework on `chainId`, or a clear refusal: a chain without it is offered no allowance mode. */
export function frameworkFor(chainId: number): Framework {
  const framework = allowanceFramework(chainId);
  if (!framework) throw new AllowanceError(`Chain ${chainId} has no Delegation Framework deployment, so it offers no allowance mode.`, 409);
  return framework;
}

function delegationAsStored(delegation: Delegation): string {
  return JSON.stringify(delegationToJson(delegation));
}

export function parseStoredDelegation(json: string): Delegation {
  return delegationFromJson(JSON.parse(json) as DelegationJson);
}

/** A stored delegation and what it allows, as readDelegation reads it: the same for as long as the row exists. */
export type StoredDelegation = { delegation: Delegation; meaning: DelegationMeaning };

const storedDelegations = new Map<string, StoredDelegation>();
const STORED_DELEGATIONS_KEPT = 10_000;

/**
 * A stored delegation, decoded once per process: a signed delegation never changes (its hash names its content, and
 * the row is never updated), and decoding its caveats cost about a millisecond on every payment that read it.
 * Callers must not modify what it returns.
 */
export function storedDelegation(framework: Framework, row: { hash: string; signed: string }): StoredDelegation {
  const key = `${framework.DelegationManager}:${row.hash}`;
  let known = storedDelegations.get(key);
  if (!known) {
    const delegation = parseStoredDelegation(row.signed);
    known = { delegation, meaning: readDelegation(framework, delegation) };
    if (storedDelegations.size >= STORED_DELEGATIONS_KEPT) storedDelegations.clear();
    storedDelegations.set(key, known);
  }
  return known;
}

/**
 * The nonce the person's EIP-7702 authorization must carry, or null when the account already runs this chain's
 * DeleGator; refuses an account that runs another implementation (the delegations would be checked by code we do not
 * know). The relayer sends the authorization, so it is the account's current transaction count.
 */
export async function authorizationNonce(chainId: number, delegator: Address): Promise<number | null> {
  const framework = frameworkFor(chainId);
  const code = ((await onChain(chainId, (client) => client.getCode({ address: delegator }))) ?? "0x").toLowerCase();
  if (code === delegatedCode(framework.implementations.EIP7702StatelessDeleGatorImpl)) return null;
  if (code !== "0x") {
    throw new AllowanceError(
      "This account already runs another smart-account implementation; an allowance needs MetaMask's EIP7702StatelessDeleGator.",
      409,
    );
  }
  return onChain(chainId, (client) => client.getTransactionCount({ address: delegator }));
}

/** Gives the person's address the DeleGator's code when it lacks it, with the authorization they signed. */
async function ensureDeleGator(
  chainId: number,
  framework: Framework,
  delegator: Address,
  authorization: SignedAuthorization | undefined,
  userId: string,
) {
  const implementation = framework.implementations.EIP7702StatelessDeleGatorImpl;
  const nonce = await authorizationNonce(chainId, delegator);
  if (nonce === null) return;
  if (!authorization) throw new AllowanceError("This account needs a signed EIP-7702 authorization for the DeleGator first.");
  // One with another nonce would be mined and paid for without taking effect.
  if (authorization.nonce !== nonce)
    throw new AllowanceError(
      `The EIP-7702 authorization was signed for nonce ${authorization.nonce}, but the account is at ${nonce}: sign it again.`,
      409,
    );
  if (authorization.chainId !== chainId)
    throw new AllowanceError("The EIP-7702 authorization must name this chain (never chain 0, which is valid everywhere).");
  if (getAddress(authorization.address) !== implementation)
    throw new AllowanceError("The EIP-7702 authorization must name the DeleGator of this chain.");
  const signer = await recoverAuthorizationAddress({ authorization });
  if (signer !== delegator) throw new AllowanceError("The EIP-7702 authorization was not signed by this account.");
  let receipt;
  try {
    const sent = await relay(
      chainId,
      { to: delegator, data: "0x", gas: 100_000n, authorizationList: [authorization] },
      { purpose: "authorization", userId, allowanceId: null },
    );
    receipt = await sent.receipt();
  } catch (error) {
    // The relayer's trouble (no funds, a node refusing it), not the person's: said so, rather than in the RPC's words alone.
    if (!(error instanceof ChainError || error instanceof RelayBudgetError || error instanceof RelayerLowError)) throw error;
    throw new AllowanceError(
      `The relayer could not send the transaction that lets ${chainById(chainId).name} enforce the allowance (${error.message}). ` +
        "Nothing was created; try again later.",
      502,
    );
  }
  const after = ((await onChain(chainId, (client) => client.getCode({ address: delegator }))) ?? "0x").toLowerCase();
  if (receipt.status !== "success" || after !== delegatedCode(implementation))
    throw new AllowanceError("The EIP-7702 authorization did not take effect.", 409);
}

/** Who holds an allowance's delegate key: the server (sealed, it signs each payment) or the agent (the server holds none). */
export type DelegateKind = "server" | "agent";

export type NewAllowance = {
  userId: string;
  credentialId: string;
  grantId?: string;
  chainId: number;
  /** the credential's address */
  delegator: Address;
  overLimit: OverLimit;
  /** signed by the person */
  delegations: Delegation[];
  authorization?: SignedAuthorization;
  /** the person's signature over the allowance's own revocation (revocation-operation.ts presignedRevocation) */
  revocation: Hex;
  /** for any payee, each token's most per payment (the person's choice, bound to their tap; the server holds to it) */
  perPayment?: PerPayment;
  /** the address of a key the agent holds, which the agent asked the allowance for; absent: the server's delegate key */
  agentDelegate?: Address;
};

/** An allowance whose signatures and shape were checked, and whose account runs the DeleGator: ready to store. */
export type ReadyAllowance = Omit<NewAllowance, "grantId" | "delegations" | "authorization" | "agentDelegate"> & {
  delegate: Address;
  delegateKind: DelegateKind;
  /** `perPaymentMax`, `float`: an any-payee delegation's most per payment and float, in base units */
  checked: { delegation: Delegation; meaning: DelegationMeaning; hash: Hex; perPaymentMax: string | null; float: string | null }[];
};

/**
 * Checks what the person signed as the DelegationManager will, then gives the account the DeleGator's code (through
 * the relayer) if it lacks it. Stores nothing: a caller that must store the allowance together with something else
 * (consent's grant) does so in its own transaction with `storeAllowance`, so a failed relay leaves no trace.
 */
export async function readyAllowance(input: NewAllowance, now = new Date()): Promise<ReadyAllowance> {
  const framework = frameworkFor(input.chainId);
  const delegateKind: DelegateKind = input.agentDelegate ? "agent" : "server";
  const delegate = input.agentDelegate ? getAddress(input.agentDelegate) : (await delegateAccount()).address;
  if (!input.delegations.length || input.delegations.length > MAX_DELEGATIONS) {
    throw new AllowanceError(`An allowance has between 1 and ${MAX_DELEGATIONS} delegations.`);
  }
  const seconds = Math.floor(now.getTime() / 1000);
  const checked: ReadyAllowance["checked"] = [];
  for (const delegation of input.delegations) {
    let meaning: DelegationMeaning;
    try {
      meaning = readDelegation(framework, delegation);
    } catch (error) {
      throw new AllowanceError((error as Error).message);
    }
    if (getAddress(delegation.delegate) !== delegate) {
      const named = delegateKind === "agent" ? "the agent's address" : "this server's delegate key";
      throw new AllowanceError(`Each delegation must name ${named}.`);
    }
    if (getAddress(delegation.delegator) !== getAddress(input.delegator))
      throw new AllowanceError("Each delegation must be from the wallet's address.");
    if (delegation.salt === 0n) throw new AllowanceError("Each delegation needs a random salt.");
    if (meaning.expiresAt <= seconds || meaning.expiresAt > seconds + MAX_EXPIRY_DAYS * DAY) {
      throw new AllowanceError(`An allowance ends within ${MAX_EXPIRY_DAYS} days.`);
    }
    if (signerOf(delegationTypedData(framework, input.chainId, delegation), delegation.signature) !== getAddress(input.delegator))
      throw new AllowanceError("A delegation's signature is not the wallet's.");
    checked.push({ delegation, meaning, hash: delegationHash(delegation), perPaymentMax: null, float: null });
  }
  checkPerPayment(checked, input.perPayment ?? []);
  // a float is kept in an account of Agent Wallet's, topped up with the delegate key: none without that key
  if (delegateKind === "agent" && checked.some(({ float }) => float !== null))
    throw new AllowanceError("An allowance the agent's own key spends has no float.");
  checkRevocation(framework, input);
  await ensureDeleGator(input.chainId, framework, getAddress(input.delegator), input.authorization, input.userId);
  const { userId, credentialId, chainId, delegator, overLimit, revocation } = input;
  return { userId, credentialId, chainId, delegator: getAddress(delegator), overLimit, delegate, delegateKind, checked, revocation };
}

/**
 * Each any-payee delegation gets its token's most per payment, and only they do: a delegation that pays anyone is
 * never stored without the server's limit, which no enforcer of the framework can set on chain.
 */
function checkPerPayment(checked: ReadyAllowance["checked"], perPayment: PerPayment) {
  const tokens = new Set(perPayment.map(({ token }) => getAddress(token)));
  if (tokens.size !== perPayment.length) throw new AllowanceError("Each token's most per payment may be given once.");
  for (const entry of checked) {
    const given = perPayment.find(({ token }) => getAddress(token) === entry.meaning.token);
    if (entry.meaning.anyPayee !== (given !== undefined))
      throw new AllowanceError("A token for any payee needs its most per payment, and only such a token has one.");
    if (given && (BigInt(given.max) <= 0n || BigInt(given.max) > entry.meaning.perPeriod))
      throw new AllowanceError("A most per payment is more than 0 and no more than the token's amount per period.");
    if (given?.float !== undefined && (BigInt(given.float) < BigInt(given.max) || BigInt(given.float) > entry.meaning.perPeriod))
      throw new AllowanceError("A float is at least the token's most per payment and no more than its amount per period.");
    entry.perPaymentMax = given ? BigInt(given.max).toString() : null;
    entry.float = given?.float === undefined ? null : BigInt(given.float).toString();
  }
}

/** Who signed `typedData`; null for a signature that is no signature at all. */
export function signerOf(typedData: TypedDataDefinition, signature: Hex): Address | null {
  try {
    return recoverTypedDataSigner(typedData, signature);
  } catch {
    return null;
  }
}

/**
 * The pre-signed revocation must be the wallet's signature over the one operation this server will send for it:
 * rebuilt here from the signed delegations and the nonce key derived from them, so it disables exactly them.
 */
export function checkRevocation(framework: Framework, input: Pick<NewAllowance, "chainId" | "delegator" | "delegations" | "revocation">) {
  const operation = presignedRevocation(framework, getAddress(input.delegator), input.delegations);
  if (signerOf(operationTypedData(framework, input.chainId, operation), input.revocation) !== getAddress(input.delegator)) {
    throw new AllowanceError(
      "The allowance's pre-signed revocation is not the wallet's signature over disabling exactly these delegations.",
    );
  }
}

/** Stores a ready allowance (in the caller's transaction); the chain enforces it from now on. */
export async function storeAllowance(tx: Tx, ready: ReadyAllowance, grantId: string | null): Promise<string> {
  const id = randomId("al_");
  const expiresAt = new Date(Math.min(...ready.checked.map(({ meaning }) => meaning.expiresAt)) * 1000);
  await tx.allowance.create({
    data: {
      id,
      userId: ready.userId,
      credentialId: ready.credentialId,
      grantId,
      chainId: ready.chainId,
      delegator: ready.delegator,
      delegate: ready.delegate,
      delegateKind: ready.delegateKind,
      overLimit: ready.overLimit,
      expiresAt,
      revocationSignature: ready.revocation,
      delegations: {
        create: ready.checked.map(({ delegation, meaning, hash, perPaymentMax, float }) => ({
          hash,
          token: meaning.token,
          signed: delegationAsStored(delegation),
          perPaymentMax,
          float,
        })),
      },
    },
  });
  return id;
}

/** The audit event of a stored allowance. */
export function auditAllowanceCreated(ready: ReadyAllowance, id: string, grantId: string | null, clock?: Clock) {
  return recordAudit(
    {
      type: "allowance.created",
      userId: ready.userId,
      credentialId: ready.credentialId,
      data: {
        allowanceId: id,
        grant: grantId,
        chainId: ready.chainId,
        delegations: ready.checked.map(({ hash }) => hash),
        overLimit: ready.overLimit,
      },
    },
    clock,
  );
}

/** Checks what the person signed and stores the allowance; the chain enforces it from now on. */
export async function createAllowance(input: NewAllowance, now = new Date()): Promise<{ id: string; hashes: Hex[] }> {
  const ready = await readyAllowance(input, now);
  const id = await db().$transaction((tx) => storeAllowance(tx, ready, input.grantId ?? null));
  await auditAllowanceCreated(ready, id, input.grantId ?? null);
  return { id, hashes: ready.checked.map(({ hash }) => hash) };
}

export type DelegationState = {
  hash: Hex;
  meaning: DelegationMeaning;
  delegation: Delegation;
  /** what may still be sent in the current period (base units), read from the enforcer */
  available: bigint;
  /** unix seconds when the next period starts */
  resetsAt: number;
  /** transfers left, read from the LimitedCallsEnforcer */
  callsLeft: number;
};

/** A delegation's remaining amount and transfers, as the enforcers on the chain see them now. */
export async function delegationState(
  chainId: number,
  framework: Framework,
  row: { hash: string; signed: string },
): Promise<DelegationState> {
  const { delegation, meaning } = storedDelegation(framework, row);
  const hash = row.hash as Hex;
  const periodCaveat = delegation.caveats.find(
    (caveat) =>
      caveat.enforcer === framework.caveatEnforcers.NativeTokenPeriodTransferEnforcer ||
      caveat.enforcer === framework.caveatEnforcers.ERC20PeriodTransferEnforcer,
  );
  if (!periodCaveat) throw new Error("an allowance delegation without its period caveat");
  const manager = framework.DelegationManager;
  const [[available, , currentPeriod], used] = await onChain(chainId, (client) =>
    Promise.all([
      meaning.token
        ? client.readContract({
            address: periodCaveat.enforcer,
            abi: ERC20PeriodTransferEnforcer,
            functionName: "getAvailableAmount",
            args: [hash, manager, periodCaveat.terms],
          })
        : client.readContract({
            address: periodCaveat.enforcer,
            abi: NativeTokenPeriodTransferEnforcer,
            functionName: "getAvailableAmount",
            args: [hash, manager, periodCaveat.terms],
          }),
      client.readContract({
        address: framework.caveatEnforcers.LimitedCallsEnforcer,
        abi: LimitedCallsEnforcer,
        functionName: "callCounts",
        args: [manager, hash],
      }),
    ]),
  );
  return {
    hash,
    meaning,
    delegation,
    available,
    // periods count from 1; 0: the first has not started yet
    resetsAt: meaning.startsAt + Number(currentPeriod) * meaning.periodSeconds,
    callsLeft: Math.max(meaning.transactions - Number(used), 0),
  };
}

/** An allowance as stored, with its delegations. */
export type Allowance = AllowanceRow & { delegations: AllowanceDelegation[] };

type DateColumn = "expiresAt" | "createdAt" | "revokedAt" | "revocationSentAt";
/** An allowance's row as the database hands it past the ORM: SQLite gives its times as text. */
type StoredAllowance = Omit<AllowanceRow, DateColumn> & Record<DateColumn, Date | string | null>;

// Read past the ORM (lib/db/prepared.ts): every payment reads its allowance, and through Prisma the two statements
// cost about two milliseconds of CPU.
const ALLOWANCE_BY_ID = new PreparedSelect<StoredAllowance>("allowance_by_id", `SELECT * FROM "Allowance" WHERE "id" = ?`);
const DELEGATIONS_OF = new PreparedSelect<AllowanceDelegation>(
  "allowance_delegations",
  `SELECT * FROM "AllowanceDelegation" WHERE "allowanceId" = ?`,
);

/** The stored row and its delegations as an Allowance. */
function allowanceOf(stored: StoredAllowance, delegations: AllowanceDelegation[]): Allowance {
  const at = (value: Date | string | null) => (value === null ? null : storedTime(value));
  const { expiresAt, createdAt, revokedAt, revocationSentAt, ...columns } = stored;
  return {
    ...columns,
    expiresAt: at(expiresAt)!,
    createdAt: at(createdAt)!,
    revokedAt: at(revokedAt),
    revocationSentAt: at(revocationSentAt),
    delegations,
  };
}

export async function findAllowance(id: string): Promise<Allowance> {
  const [[stored], delegations] = await Promise.all([selectRows(ALLOWANCE_BY_ID, id), selectRows(DELEGATIONS_OF, id)]);
  if (!stored) throw new NotFoundError("The allowance");
  return allowanceOf(stored, delegations);
}

/**
 * The grant's live allowances for a credential, newest first, a row per delegation (each delegation's columns renamed),
 * with how many allowances the grant was ever given for it (`made`; one row of nulls beside it when none is live). The
 * time is compared as SQLite stores it; PostgreSQL reads the same text as the UTC timestamp it names.
 */
const LIVE_ALLOWANCES = new PreparedSelect<Partial<StoredAllowance & DelegationColumns> & { made: number | string }>(
  "live_allowances",
  `SELECT m."made", a.*, d."hash" AS "delegationHash", d."token" AS "delegationToken", d."signed" AS "delegationSigned",
    d."perPaymentMax" AS "delegationPerPaymentMax", d."float" AS "delegationFloat"
  FROM (SELECT COUNT(*) AS "made" FROM "Allowance" WHERE "grantId" = ? AND "credentialId" = ?) m
  LEFT JOIN "Allowance" a ON a."grantId" = ? AND a."credentialId" = ? AND a."status" = 'active' AND a."expiresAt" > ?
  LEFT JOIN "AllowanceDelegation" d ON d."allowanceId" = a."id"
  ORDER BY a."createdAt" DESC, a."id"`,
);
type DelegationColumns = {
  delegationHash: string;
  delegationToken: string | null;
  delegationSigned: string;
  delegationPerPaymentMax: string | null;
  delegationFloat: string | null;
};

/** The grant's live allowances for `credentialId` (newest first), and how many it was ever given for it: one statement. */
export async function readLiveAllowances(
  grantId: string,
  credentialId: string,
  now: Date,
): Promise<{ made: number; allowances: Allowance[] }> {
  const rows = await selectRows(LIVE_ALLOWANCES, grantId, credentialId, grantId, credentialId, sqliteDateTime(now));
  const allowances = new Map<string, Allowance>();
  for (const row of rows) {
    if (!row.id) continue;
    const { made: _made, delegationHash, delegationToken, delegationSigned, delegationPerPaymentMax, delegationFloat, ...stored } = row;
    const allowance = allowances.get(row.id) ?? allowanceOf(stored as StoredAllowance, []);
    allowances.set(row.id, allowance);
    if (!delegationHash || !delegationSigned) continue;
    allowance.delegations.push({
      hash: delegationHash,
      allowanceId: row.id,
      token: delegationToken ?? null,
      signed: delegationSigned,
      perPaymentMax: delegationPerPaymentMax ?? null,
      float: delegationFloat ?? null,
    });
  }
  return { made: Number(rows[0]?.made ?? 0), allowances: [...allowances.values()] };
}

const ALLOWANCE_STATUS = new PreparedSelect<AllowanceStatus>(
  "allowance_status",
  `SELECT "status", "attention" FROM "Allowance" WHERE "id" = ?`,
);

/** Whether the grant's allowance for this credential on this chain waits for the person (paused, lib/allowances/guard.ts). */
export async function allowancePaused(grantId: string, credentialId: string, chainId: number): Promise<boolean> {
  return (await db().allowance.count({ where: { grantId, credentialId, chainId, status: "suspended" } })) > 0;
}

/** What of an allowance changes while it lives (read again under its lease). */
export type AllowanceStatus = { status: string; attention: string | null };

/** What of an allowance changes while it lives; undefined when there is none. */
export async function allowanceStatus(id: string): Promise<AllowanceStatus | undefined> {
  return (await selectRows(ALLOWANCE_STATUS, id))[0];
}

/** allowanceStatus in the caller's transaction, without waiting for the answer: it is there once the transaction has run. */
export function* allowanceStatusIn(id: string): TransactionScript<() => AllowanceStatus | undefined> {
  const rows = yield* rowsLater<AllowanceStatus>(ALLOWANCE_STATUS.sql, id);
  return () => rows()[0];
}
