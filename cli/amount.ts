// Amounts on the command line: a plain integer is wei; a number with a unit is
// converted exactly (no floating point): 0.01eth, 1.5 ether, 20gwei, 100wei. A plain
// number with a fraction is refused with the unit it most likely meant.

const UNITS: Record<string, number> = { wei: 0, kwei: 3, mwei: 6, gwei: 9, szabo: 12, finney: 15, eth: 18, ether: 18 };

export class AmountError extends Error {}

/** "0.01eth" → "10000000000000000"; "1000" → "1000". Throws AmountError when malformed. */
export function parseAmount(input: string): string {
  const match = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*$/.exec(input);
  if (!match) throw new AmountError(`${JSON.stringify(input)} is not an amount: use wei (e.g. 1000) or a unit (e.g. 0.01eth, 20gwei)`);
  const [, number, rawUnit] = match;
  const unit = rawUnit.toLowerCase();
  if (unit && !(unit in UNITS)) throw new AmountError(`Unknown unit ${JSON.stringify(rawUnit)}: use ${Object.keys(UNITS).join(", ")}`);
  const decimals = unit ? UNITS[unit] : 0;
  const [whole, fraction = ""] = number.split(".");
  // A bare number is wei, which has no fractions: "0.01" was meant in a unit, most likely the coin.
  if (!unit && fraction.replace(/0+$/, "")) {
    throw new AmountError(`${JSON.stringify(input)} has no unit, and a bare number is wei: did you mean ${number.trim()}eth?`);
  }
  if (fraction.replace(/0+$/, "").length > decimals) {
    throw new AmountError(
      `${JSON.stringify(input)} has more decimals than ${unit || "wei"} allows (${decimals}): the smallest amount is 1 wei`,
    );
  }
  const wei = BigInt(whole || "0") * 10n ** BigInt(decimals) + BigInt((fraction + "0".repeat(decimals)).slice(0, decimals) || "0");
  if (wei >= 10n ** 78n) throw new AmountError(`${JSON.stringify(input)} is too large`);
  return wei.toString();
}
