/**
 * One value for the whole process under `name`, made on first use. The production server loads some modules twice (its
 * own bundle serves /mcp, Next's serves the pages and runs instrumentation.ts): state that must be the process's, not
 * a copy's, is kept on globalThis.
 */
export function processWide<T>(name: string, make: () => T): T {
  const holder = globalThis as { [key: symbol]: unknown };
  const key = Symbol.for(`agent-wallet.${name}`);
  holder[key] ??= make();
  return holder[key] as T;
}
