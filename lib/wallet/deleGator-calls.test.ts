import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { EIP7702StatelessDeleGator } from "@metamask/delegation-abis";
import { concat, encodeFunctionData, erc20Abi, parseEther } from "viem";
import { auditedRuns, decodeDeleGatorCall } from "./deleGator-calls";
import { execute, mode, redeem } from "@/lib/allowances/deleGator.fixture";

const TAKER = "0x000000000000000000000000000000000000bEEF";
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const PERSON = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const MANAGER = "0x0000000000000000000000000000000000000001";
const send = (value: bigint) => ({ target: TAKER, value, callData: "0x" }) as const;
const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [TAKER, 5n] });
const reason = (data: `0x${string}`) => {
  const call = decodeDeleGatorCall(data, [MANAGER]);
  return call?.kind === "unreadable" ? call.reason : null;
};

describe("calls into the DeleGator", () => {
  it("execute of one packed execution runs it from the wallet itself", () => {
    assert.deepEqual(decodeDeleGatorCall(execute([send(parseEther("1"))])), {
      kind: "runs",
      functionName: "execute",
      runs: [{ delegator: null, delegations: 0, executions: [send(parseEther("1"))] }],
    });
  });

  it("a batch, execute of one Execution, and a redemption: every execution, and whose account runs it", () => {
    const batch = decodeDeleGatorCall(execute([send(1n), { target: TOKEN, value: 0n, callData: transfer }]));
    assert.deepEqual(batch?.kind === "runs" && batch.runs[0].executions, [send(1n), { target: TOKEN, value: 0n, callData: transfer }]);
    const one = encodeFunctionData({ abi: EIP7702StatelessDeleGator, functionName: "execute", args: [send(3n)] });
    assert.deepEqual(decodeDeleGatorCall(one), {
      kind: "runs",
      functionName: "execute",
      runs: [{ delegator: null, delegations: 0, executions: [send(3n)] }],
    });
    // A redemption runs on the root delegator's account (the last of the chain); none: the caller's own.
    const redeemed = decodeDeleGatorCall(redeem([{ delegate: TAKER, delegator: PERSON }], [send(2n)]));
    assert.deepEqual(redeemed?.kind === "runs" && redeemed.runs, [{ delegator: PERSON, delegations: 1, executions: [send(2n)] }]);
    const own = decodeDeleGatorCall(redeem([], [send(2n)]));
    assert.deepEqual(own?.kind === "runs" && own.runs, [{ delegator: null, delegations: 0, executions: [send(2n)] }]);
  });

  it("modes that cannot be read as calls are named: delegatecall, try, any other", () => {
    const run = (code: `0x${string}`) => reason(execute([send(1n)], code)) ?? "";
    assert.match(run(mode("ff")), /delegatecall/);
    assert.match(run(mode("00", "01")), /try mode/);
    assert.match(run(mode("01", "01")), /try mode/);
    assert.match(run(mode("fe")), /call type 0xfe/);
    assert.match(run(`0x0000${"00".repeat(4)}12345678${"00".repeat(22)}`), /mode .* is not one this wallet reads/);
  });

  it("nested executions, calls to the framework and bytes past the arguments are not read", () => {
    const nested = execute([{ target: PERSON, value: 0n, callData: execute([send(parseEther("1"))]) }]);
    assert.match(reason(nested) ?? "", /nested/);
    const redeemInside = execute([{ target: PERSON, value: 0n, callData: redeem([], [send(1n)]) }]);
    assert.match(reason(redeemInside) ?? "", /nested/);
    assert.match(reason(execute([{ target: MANAGER, value: 0n, callData: "0x" }])) ?? "", /Delegation Framework's own contract/);
    assert.match(reason(concat([execute([send(1n)]), "0x00"])) ?? "", /standard encoding/);
    assert.equal(reason(execute([send(1n)]).slice(0, 60) as `0x${string}`), "its arguments do not decode");
  });

  it("the account's own moves that cannot be counted are named: a delegation enabled again, its EntryPoint deposit", () => {
    const withdraw = encodeFunctionData({ abi: EIP7702StatelessDeleGator, functionName: "withdrawDeposit", args: [TAKER, 1n] });
    assert.match(reason(withdraw) ?? "", /deposit at the EntryPoint/);
    const delegation = {
      delegate: TAKER,
      delegator: PERSON,
      authority: `0x${"ff".repeat(32)}`,
      caveats: [],
      salt: 1n,
      signature: "0x",
    } as const;
    const enable = encodeFunctionData({ abi: EIP7702StatelessDeleGator, functionName: "enableDelegation", args: [delegation] });
    assert.match(reason(enable) ?? "", /enables a delegation again/);
  });

  it("any other calldata is not the DeleGator's", () => {
    assert.equal(decodeDeleGatorCall(transfer), null);
    assert.equal(decodeDeleGatorCall("0x"), null);
  });

  it("the audit log keeps what a call runs: each execution's recipient, value and whether it calls code, ten at most", () => {
    assert.equal(auditedRuns(transfer), null, "a token transfer is no DeleGator call");
    assert.deepEqual(auditedRuns(execute([send(parseEther("1")), { target: TOKEN, value: 0n, callData: transfer }])), {
      functionName: "execute",
      executions: [
        { from: null, recipient: TAKER, value: "1000000000000000000", call: false },
        { from: null, recipient: TOKEN, value: "0", call: true },
      ],
      total: 2,
    });
    assert.deepEqual(auditedRuns(redeem([{ delegate: TAKER, delegator: PERSON }], [send(2n)]))?.executions, [
      { from: PERSON, recipient: TAKER, value: "2", call: false },
    ]);
    const many = auditedRuns(execute(Array.from({ length: 12 }, (_, index) => send(BigInt(index)))));
    assert.equal(many?.executions?.length, 10);
    assert.equal(many?.total, 12);
    assert.deepEqual(auditedRuns(execute([send(1n)], mode("ff")), [MANAGER]), {
      functionName: "execute",
      unreadable: "it runs code by delegatecall, as the account itself, which cannot be read as calls",
    });
  });
});
