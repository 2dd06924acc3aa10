// An allowance world whose app reaches the chain through a fault proxy (fault-proxy.ts), on 2-second blocks: the world
// of the suites that fail the provider under the app (flaky-provider-suite.ts, own-payments-faults-suite.ts).
import { startAllowanceWorld, type AllowanceWorld } from "./allowances";
import { faultProxy, type FaultProxy } from "./fault-proxy";

export async function startFaultyWorld(
  database: "sqlite" | "postgres",
): Promise<{ world: AllowanceWorld; proxy: FaultProxy; stop: () => Promise<void> }> {
  let proxy: FaultProxy | undefined;
  const world = await startAllowanceWorld({
    database,
    rpcUrl: async (chain) => {
      proxy = await faultProxy(chain.rpcUrl);
      return proxy.rpcUrl;
    },
  });
  await world.chain.mineEvery(2000);
  return {
    world,
    proxy: proxy!,
    stop: async () => {
      await proxy?.stop();
      await world.stop();
    },
  };
}
