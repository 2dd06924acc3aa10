import { formatEther, formatGwei } from "viem";
import type { RequestDescription } from "@/lib/wallet/request-description";
import type { ContactNames } from "@/lib/wallet/address-book";
import { AddressText, DescribedFields, ExecutionsFields, Field } from "./fields";
import { CopyButton } from "@/components/shared/copy-button";
import { Money } from "@/components/prices/money";
import { readableUnits } from "@/contract/limits-in-words";

/** A send_transaction as the person approves it: the call in words, then the chain, value, data and fee (`valued`: see DescribedFields). */
export function TransactionDetails({
  chain,
  transaction,
  call,
  names,
  valued,
}: Extract<RequestDescription, { kind: "send_transaction" }> & { names: ContactNames; valued: boolean }) {
  const plain = call.kind === "none";
  return (
    <>
      {call.kind === "decoded" && <DescribedFields described={call} names={names} valued={valued} />}
      {call.kind === "executions" && <ExecutionsFields executions={call} names={names} valued={valued} />}
      {call.kind === "unknown" && (
        <>
          <Field label="Action">
            <p role="note" className="warning">
              <strong>Unknown contract call.</strong> This screen cannot put this call in words: approve only if you know what it does.
            </p>
          </Field>
          <Field label="Function selector">
            <span className="mono">{call.selector}</span>
          </Field>
        </>
      )}
      <Field label="Chain">
        {chain.name} ({chain.id})
      </Field>
      <Field label={plain ? "Recipient" : "Contract"}>
        <AddressText address={transaction.to} names={names} />{" "}
        <CopyButton text={transaction.to} what={plain ? "recipient address" : "contract address"} />
      </Field>
      <Field label={plain ? "Amount" : `${chain.symbol} sent with the call`}>
        <strong>
          {formatEther(BigInt(transaction.value))} {chain.symbol}
        </strong>
        {valued && <Money chainId={chain.id} token={null} amount={BigInt(transaction.value)} decimals={18} />}
      </Field>
      <Field label="Data">
        <span className="mono small">{plain ? "none (a plain transfer)" : transaction.data}</span>
      </Field>
      <Field label="Maximum network fee">
        {/* a most, in a few digits rounded up: never shown below what it can cost */}
        {readableUnits(formatEther(BigInt(transaction.gas) * BigInt(transaction.maxFeePerGas)), true)} {chain.symbol}
        {valued && (
          <Money chainId={chain.id} token={null} amount={BigInt(transaction.gas) * BigInt(transaction.maxFeePerGas)} decimals={18} />
        )}
        <span className="muted small">
          {" "}
          · {transaction.gas} gas at up to {readableUnits(formatGwei(BigInt(transaction.maxFeePerGas)), true)} gwei
        </span>
      </Field>
      <Field label="Nonce">{transaction.nonce ?? "Set when you approve: the next free one of this wallet"}</Field>
    </>
  );
}
