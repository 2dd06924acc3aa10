import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { TypedDataDefinition } from "viem";
import { etherMail } from "./ether-mail.fixture";
import { declaredFields, domainFields } from "./typed-data-fields";

// With fields the types do not declare, which must never be shown.
const base = etherMail();
const mail = {
  ...base,
  message: { ...base.message, from: { ...base.message.from, nickname: "not declared" }, hidden: "not declared either" },
} as unknown as TypedDataDefinition;

describe("declaredFields", () => {
  it("walks the primary type's declared struct, nested structs and arrays included, and nothing else", () => {
    assert.deepEqual(declaredFields(mail), [
      {
        name: "from",
        type: "Person",
        fields: [
          { name: "name", type: "string", value: "Cow" },
          {
            name: "wallets",
            type: "address[]",
            fields: [{ name: "wallets[0]", type: "address", value: "0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826" }],
          },
        ],
      },
      {
        name: "to",
        type: "Person[]",
        fields: [
          {
            name: "to[0]",
            type: "Person",
            fields: [
              { name: "name", type: "string", value: "Bob" },
              { name: "wallets", type: "address[]", fields: [] },
            ],
          },
        ],
      },
      { name: "contents", type: "string", value: "Hello, Bob!" },
    ]);
    assert.doesNotMatch(JSON.stringify(declaredFields(mail)), /not declared/);
  });

  it("stops at a struct whose value is not an object instead of walking a self-referencing type forever", () => {
    const loop = { ...mail, types: { Node: [{ name: "next", type: "Node" }] }, primaryType: "Node", message: { next: "end" } };
    assert.deepEqual(declaredFields(loop as unknown as TypedDataDefinition), [{ name: "next", type: "Node", value: "end" }]);
  });
});

describe("domainFields", () => {
  it("lists only the EIP-712 domain fields that are present, in the standard's order", () => {
    const domain = { verifyingContract: "0x0000000000000000000000000000000000000001", owner: "me", name: "App", chainId: 5 };
    assert.deepEqual(domainFields({ ...mail, domain } as unknown as TypedDataDefinition), [
      { name: "name", type: "string", value: "App" },
      { name: "chainId", type: "uint256", value: "5" },
      { name: "verifyingContract", type: "address", value: "0x0000000000000000000000000000000000000001" },
    ]);
  });
});
