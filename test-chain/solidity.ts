// Solidity compiled in the test process with solc-js (solc's npm package carries its compiler, so nothing is
// downloaded): for contracts no package ships compiled.
import { createRequire } from "node:module";
import type { Abi, Hex } from "viem";

const require = createRequire(import.meta.url);

export type Compiled = { abi: Abi; bytecode: Hex };

/**
 * `contract` of the source `file` (its text `content`); `findImports` reads what it imports; `settings` are solc's
 * (a contract written for the IR pipeline: `{ viaIR: true, optimizer: { enabled: true } }`).
 */
export function compileSolidity(
  file: string,
  content: string,
  contract: string,
  findImports?: (path: string) => string,
  settings: object = {},
): Compiled {
  const solc = require("solc") as { compile: (input: string, callbacks: object) => string };
  const input = {
    language: "Solidity",
    sources: { [file]: { content } },
    settings: { ...settings, outputSelection: { "*": { [contract]: ["abi", "evm.bytecode.object"] } } },
  };
  const callbacks = findImports ? { import: (path: string) => ({ contents: findImports(path) }) } : {};
  const output = JSON.parse(solc.compile(JSON.stringify(input), callbacks)) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === "error");
  if (errors.length) throw new Error(errors.map((error) => error.formattedMessage).join("\n"));
  const compiled = output.contracts[file][contract];
  return { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` };
}
