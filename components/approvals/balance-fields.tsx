// The wallet's balances beside the request, and what a send leaves. Streamed in after the decision: the page and its
// Approve button never wait for the chain (lib/prices/feeds.ts bounds every read).
import { Suspense } from "react";
import { formatUnits, type Address } from "viem";
import { decodeCall } from "@/lib/wallet/call-decoding";
import type { PreparedTransaction } from "@/lib/wallet/request-payload";
import type { Chain } from "@/lib/config";
import { amountText, coinOf, holdingsOf, tokenAsset, walletAssets, type Asset, type Holding } from "@/lib/prices/holdings";
import { holdingText } from "@/components/prices/holdings";
import { Field } from "./fields";

type Send = { chain: Chain; transaction: PreparedTransaction };

/** What a send takes from the wallet: its coin (value and at most the whole fee) and, for a token transfer, the token. */
async function spending({ chain, transaction }: Send): Promise<{ asset: Asset; amount: bigint }[]> {
  const coin = { asset: coinOf(chain), amount: BigInt(transaction.value) + BigInt(transaction.gas) * BigInt(transaction.maxFeePerGas) };
  const call = decodeCall(transaction.data);
  if (call.kind !== "transfer" && call.kind !== "transferAndCall") return [coin];
  const token = await tokenAsset(chain, transaction.to);
  return token ? [coin, { asset: token, amount: call.amount }] : [coin];
}

function afterText(holding: Holding, spent: bigint): string {
  if (holding.balance === null) return `${holding.symbol} balance unavailable`;
  const left = holding.balance - spent;
  if (left < 0n) return `Not enough ${holding.symbol}: ${formatUnits(-left, holding.decimals)} ${holding.symbol} short`;
  return amountText(left, holding, holding.price);
}

function Lines({ lines }: { lines: string[] }) {
  return (
    <ul className="holdings">
      {lines.map((line) => (
        <li key={line}>{line}</li>
      ))}
    </ul>
  );
}

async function BalanceRead({ userId, address, send }: { userId: string; address: Address; send: Send | null }) {
  if (!send) {
    const holdings = await holdingsOf(address, await walletAssets(userId));
    return (
      <Field label="Balance">
        <Lines lines={holdings.map(holdingText)} />
      </Field>
    );
  }
  const spent = await spending(send);
  const holdings = await holdingsOf(
    address,
    spent.map((entry) => entry.asset),
  );
  return (
    <>
      <Field label="Balance">
        <Lines lines={holdings.map(holdingText)} />
      </Field>
      <Field label="Balance after">
        <Lines lines={holdings.map((holding, index) => afterText(holding, spent[index].amount))} />
        <span className="muted small">if the whole maximum network fee is paid</span>
      </Field>
    </>
  );
}

/** The "Balance" (and, for a send, "Balance after") lines of the approval summary. */
export function BalanceFields(props: { userId: string; address: Address; send: Send | null }) {
  return (
    <Suspense
      fallback={
        <Field label="Balance">
          <span aria-busy="true">Reading balances…</span>
        </Field>
      }
    >
      <BalanceRead {...props} />
    </Suspense>
  );
}
