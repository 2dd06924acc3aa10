import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { hashTypedData } from "viem";
import { etherMail } from "./ether-mail.fixture";
import { checkedTypedData, MAX_TYPED_DATA_DEPTH, TypedDataError, type TypedDataInput } from "./typed-data";

const mail = (): TypedDataInput => etherMail();

function refused(input: object, message: RegExp) {
  assert.throws(
    () => checkedTypedData(input as TypedDataInput),
    (error: unknown) => error instanceof TypedDataError && message.test(error.message),
  );
}

describe("checkedTypedData", () => {
  it("accepts well-formed typed data and signs exactly it (the declared domain type is derived again)", () => {
    const input = mail();
    const typedData = checkedTypedData(input);
    assert.equal("EIP712Domain" in typedData.types, false);
    assert.equal(hashTypedData(typedData), hashTypedData(input as never));
  });

  it("refuses a message field that types does not declare, naming its path", () => {
    const input = mail();
    (input.message.from as Record<string, unknown>).nickname = "hidden";
    refused(input, /^message\.from\.nickname is not declared in types\.Person$/);
    const nested = mail();
    (nested.message.to as Record<string, unknown>[])[0].extra = 1;
    refused(nested, /^message\.to\[0\]\.extra is not declared in types\.Person$/);
  });

  it("refuses a missing declared field, a primaryType not in types, and EIP712Domain as primaryType", () => {
    const missing = mail();
    delete missing.message.contents;
    refused(missing, /^message\.contents is missing/);
    refused({ ...mail(), primaryType: "Letter" }, /^primaryType Letter is not declared in types$/);
    refused({ ...mail(), primaryType: "EIP712Domain" }, /not EIP712Domain/);
  });

  it("refuses domain fields that are not EIP-712's or that the declared domain type leaves out", () => {
    refused({ ...mail(), domain: { ...mail().domain, owner: "me" } }, /^domain\.owner is not an EIP-712 domain field$/);
    refused(
      { ...mail(), domain: { ...mail().domain, salt: `0x${"00".repeat(32)}` } },
      /^domain\.salt is not declared in types\.EIP712Domain$/,
    );
    const { version: _version, ...withoutVersion } = mail().domain;
    refused({ ...mail(), domain: withoutVersion }, /^domain\.version is missing/);
    const retyped = mail();
    retyped.types.EIP712Domain[2] = { name: "chainId", type: "string" };
    refused(retyped, /declares chainId as string/);
  });

  it("refuses values of the wrong shape: a struct that is not an object, a fixed array of another length", () => {
    const input = mail();
    input.message.from = "Cow";
    refused(input, /^message\.from must be an object \(Person\)$/);
    const fixed = mail();
    fixed.types.Mail[1] = { name: "to", type: "Person[2]" };
    refused(fixed, /^message\.to must hold exactly 2 items/);
  });

  it(`refuses nesting deeper than ${MAX_TYPED_DATA_DEPTH} levels`, () => {
    const types: Record<string, { name: string; type: string }[]> = { Leaf: [{ name: "value", type: "uint256" }] };
    let message: Record<string, unknown> = { value: "1" };
    let type = "Leaf";
    for (let level = 0; level < MAX_TYPED_DATA_DEPTH; level++) {
      types[`Level${level}`] = [{ name: "inner", type }];
      type = `Level${level}`;
      message = { inner: message };
    }
    refused({ domain: { name: "Deep" }, types, primaryType: type, message }, /nests deeper than 8 levels/);
    // One level less is fine.
    const shallow = { domain: { name: "Deep" }, types, primaryType: `Level${MAX_TYPED_DATA_DEPTH - 2}`, message: message.inner as never };
    assert.doesNotThrow(() => checkedTypedData(shallow));
  });

  it("checks every value against its declared type: nothing a signer would coerce is shown one way and signed another", () => {
    const withValue = (path: "from.name" | "from.wallets", value: unknown) => {
      const input = mail();
      (input.message.from as Record<string, unknown>)[path.split(".")[1]] = value;
      return input;
    };
    refused(withValue("from.wallets", ["not an address"]), /message\.from\.wallets\[0\] must be a 20-byte 0x address \(address\)/);
    refused(withValue("from.name", 42), /message\.from\.name must be a string \(string\)/);
    const order = (amount: unknown, extra: Record<string, string> = {}) => ({
      domain: { name: "Shop", chainId: 1 },
      types: { Order: [{ name: "amount", type: extra.type ?? "uint256" }] },
      primaryType: "Order",
      message: { amount },
    });
    refused(order(true), /message\.amount must be an integer \(uint256\)/);
    refused(order(1.5), /must be an integer/);
    refused(order(2 ** 60), /must be an integer/);
    refused(order("1e3"), /must be an integer/);
    refused(order("-1"), /message\.amount is out of range for uint256/);
    refused(order("256", { type: "uint8" }), /out of range for uint8/);
    refused(order("-129", { type: "int8" }), /out of range for int8/);
    refused(order("1", { type: "bool" }), /message\.amount must be true or false \(bool\)/);
    refused(order("0x12", { type: "bytes2" }), /must be 2 bytes in 0x hex/);
    refused(order("0x1", { type: "bytes" }), /must be 0x hex bytes/);
    refused(order("1", { type: "Unknown" }), /has type Unknown, which is neither an EIP-712 type nor declared/);
    refused({ ...order("1"), domain: { name: 7, chainId: 1 } }, /domain\.name must be a string/);
    refused({ ...order("1"), domain: { name: "Shop", chainId: "one" } }, /domain\.chainId must be an integer/);
    for (const value of ["42", 42, "0x2a", "-0"]) assert.doesNotThrow(() => checkedTypedData(order(value) as TypedDataInput));
    assert.doesNotThrow(() => checkedTypedData(order("-128", { type: "int8" }) as TypedDataInput));
    assert.doesNotThrow(() => checkedTypedData(order(true, { type: "bool" }) as TypedDataInput));
  });
});
