import { appRoute } from "@/lib/routes/app-route";
import { addTestFunds, testFundsSchema } from "@/lib/wallet/test-funds";

/** Test ETH and test USDC for this wallet, on the app's own local test chain only. */
export const POST = appRoute(testFundsSchema, (input, { user, params }) => addTestFunds(user.id, params.id, input));
