// The wallet's balances beside the request, and what a send leaves. Streamed in after the decision: the page and its
// Approve button never wait for the chain (lib/prices/feeds.ts bounds every read).
import { Suspense } from "react";
import { formatUnits, type Address } from "viem";
import { decodeCall } from "@/lib/wallet/call-decoding";
import { config } from "@/lib/config";
import type { CallDescription, Detail, RequestDescription } from "@/lib/wallet/request-description";
import { coinOf, holdingsOf, walletAssets, type Holding } from "@/lib/prices/holdings";
import { tokenAsset, type Asset } from "@/lib/wallet/token-metadata";
import { AssetAmount, HoldingLine } from "@/components/prices/holdings";
import { Field } from "./fields";

type Send = Extract<RequestDescription, { kind: "send_transaction" }>;
type Props = { userId: string; address: Address; description: RequestDescription };

/**
 * What a send takes from the wallet: its coin (value, what the calls it runs through the DeleGator send, and at most the
 * whole fee) and, for a token transfer, the token.
 */
async function spending({ chain, transaction, call: described }: Send): Promise<{ asset: Asset; amount: bigint }[]> {
  const runs = described.kind === "executions" ? BigInt(described.sends) : 0n;
  const fee = BigInt(transaction.gas) * BigInt(transaction.maxFeePerGas);
  const coin = { asset: coinOf(chain), amount: BigInt(transaction.value) + runs + fee };
  const call = decodeCall(transaction.data);
  if (call.kind !== "transfer" && call.kind !== "transferAndCall") return [coin];
  const token = await tokenAsset(chain, transaction.to);
  return token ? [coin, { asset: token, amount: call.amount }] : [coin];
}

/** The details of a call, or of each call the DeleGator runs. */
function callDetails(call: CallDescription): Detail[] {
  if (call.kind === "decoded") return call.details;
  return call.kind === "executions" ? call.runs.flatMap((run) => run.calls.flatMap((inner) => inner.details)) : [];
}

/** The tokens a request names with an amount (a transfer, an approval, a permit), as the chains describe them. */
async function namedTokens(description: RequestDescription): Promise<Asset[]> {
  const details: Detail[] =
    description.kind === "send_transaction"
      ? callDetails(description.call)
      : description.kind === "sign_typed_data"
        ? (description.permit?.details ?? [])
        : [];
  const tokens = details.flatMap(({ value }) => (value?.token ? [{ chainId: value.chainId, token: value.token }] : []));
  const named = new Map(tokens.map((value) => [`${value.chainId}:${value.token.toLowerCase()}`, value]));
  const assets = await Promise.all(
    [...named.values()].map((value) => {
      // Typed data may name a chain this service does not read: nothing to show there.
      const chain = config().chains.find((candidate) => candidate.id === value.chainId);
      return chain ? tokenAsset(chain, value.token) : null;
    }),
  );
  return assets.filter((asset) => asset !== null);
}

/** Each asset once (the same token may be followed and named). */
function distinct(assets: Asset[]): Asset[] {
  const key = (asset: Asset) => `${asset.chain.id}:${asset.token?.toLowerCase() ?? "coin"}`;
  return [...new Map(assets.map((asset) => [key(asset), asset])).values()];
}

function AfterLine({ holding, spent }: { holding: Holding; spent: bigint }) {
  if (holding.balance === null) return `${holding.symbol} balance unavailable`;
  const left = holding.balance - spent;
  if (left < 0n) return `Not enough ${holding.symbol}: ${formatUnits(-left, holding.decimals)} ${holding.symbol} short`;
  return <AssetAmount amount={left} asset={holding} price={holding.price} />;
}

const assetKey = (asset: Asset) => `${asset.chain.id}:${asset.token ?? "coin"}`;

function Lines({ holdings }: { holdings: Holding[] }) {
  return (
    <ul className="holdings">
      {holdings.map((holding) => (
        <li key={assetKey(holding)}>
          <HoldingLine holding={holding} />
        </li>
      ))}
    </ul>
  );
}

async function BalanceRead({ userId, address, description }: Props) {
  const named = namedTokens(description);
  if (description.kind !== "send_transaction") {
    const [followed, asked] = await Promise.all([walletAssets(userId), named]);
    const holdings = await holdingsOf(address, distinct([...followed, ...asked]));
    return (
      <Field label="Balance">
        <Lines holdings={holdings} />
      </Field>
    );
  }
  const [spent, asked] = await Promise.all([spending(description), named]);
  const holdings = await holdingsOf(address, distinct([...spent.map((entry) => entry.asset), ...asked]));
  return (
    <>
      <Field label="Balance">
        <Lines holdings={holdings} />
      </Field>
      <Field label="Balance after">
        <ul className="holdings">
          {spent.map((entry, index) => (
            <li key={assetKey(entry.asset)}>
              <AfterLine holding={holdings[index]} spent={entry.amount} />
            </li>
          ))}
        </ul>
        <span className="muted small">if the whole maximum network fee is paid</span>
      </Field>
    </>
  );
}

/**
 * The "Balance" lines of the approval summary: what the request touches (the coin, the tokens it names) and, for a
 * message or typed data, the tokens the person follows; for a send, also "Balance after".
 */
export function BalanceFields(props: Props) {
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
