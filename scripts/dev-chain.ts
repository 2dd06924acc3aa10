// npm run dev:chain: the local test chain alone (test-chain/index.ts: hardhat, chain 31337, on 127.0.0.1:8545 unless
// --port N), for an app started some other way (`npm run build` and server.ts, `next dev`). `npm start` with no CHAINS
// runs one itself. It prints the settings that point the app at it; stop it with Ctrl-C.
import { startTestChain } from "../test-chain";

const port = Number(process.argv[process.argv.indexOf("--port") + 1] || 8545) || 8545;
const chain = await startTestChain({ port });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void chain.stop().then(() => process.exit(0)));

console.log(`Local test chain ${chain.chainId} on ${chain.rpcUrl}: Delegation Framework, test USDC at ${chain.usdc}, test prices.`);
console.log("Start the app with:");
console.log(
  Object.entries(chain.settings)
    .map(([name, value]) => `${name}='${value}'`)
    .join(" \\\n") + " \\\n<command that starts the app>",
);
