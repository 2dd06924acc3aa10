import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { auditQueryString, exportLine, parseAuditDate, parseAuditQuery, type AuditEventRow } from "./query";
import { foldByRequest, formatAuditTime, isRead, summarizeEvent, summarizeRow, transactionOf, type Names } from "./describe";

/** A distinct address for a test's parties. */
const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;

describe("parseAuditDate", () => {
  it("reads a date input's day in UTC; as the upper bound, the whole day", () => {
    assert.equal(parseAuditDate("2025-03-04", "from")?.toISOString(), "2025-03-04T00:00:00.000Z");
    assert.equal(parseAuditDate("2025-03-04", "to")?.toISOString(), "2025-03-05T00:00:00.000Z");
  });
  it("reads a full ISO instant as is", () => {
    assert.equal(parseAuditDate("2025-03-04T10:20:30Z", "to")?.toISOString(), "2025-03-04T10:20:30.000Z");
    assert.equal(parseAuditDate("2025-03-04T10:20:30.5+02:00", "from")?.toISOString(), "2025-03-04T08:20:30.500Z");
  });
  it("refuses what is not a real date", () => {
    for (const value of ["2025-02-30", "2025-13-01", "yesterday", "2025-3-4", "1700000000", "2025-03-04T10:20"]) {
      assert.equal(parseAuditDate(value, "from"), null, value);
    }
  });
});

describe("parseAuditQuery", () => {
  it("reads every filter and a cursor", () => {
    const query = parseAuditQuery(
      new URLSearchParams("type=credential.connected&client=c1&credential=cr_1&from=2025-01-01&to=2025-01-31&before=120"),
    );
    assert.deepEqual(query.errors, []);
    assert.equal(query.filters.type, "credential.connected");
    assert.equal(query.filters.clientId, "c1");
    assert.equal(query.filters.credentialId, "cr_1");
    assert.equal(query.filters.from?.toISOString(), "2025-01-01T00:00:00.000Z");
    assert.equal(query.filters.to?.toISOString(), "2025-02-01T00:00:00.000Z");
    assert.deepEqual(query.page, { before: 120 });
  });
  it("treats empty fields as no filter (the form sends them all)", () => {
    const query = parseAuditQuery({ type: "", client: "", credential: "", from: "", to: "" });
    assert.deepEqual(query.errors, []);
    assert.deepEqual(query.filters, {});
    assert.deepEqual(query.page, {});
  });
  it("reports a malformed filter instead of dropping it", () => {
    assert.equal(parseAuditQuery({ type: "user.hacked" }).errors.length, 1);
    assert.equal(parseAuditQuery({ from: "soon" }).errors.length, 1);
    assert.equal(parseAuditQuery({ from: "2025-02-01", to: "2025-01-01" }).errors.length, 1);
    assert.equal(parseAuditQuery({ client: "x".repeat(201) }).errors.length, 1);
  });
  it("accepts one positive integer cursor, never both", () => {
    assert.deepEqual(parseAuditQuery({ after: "7" }).page, { after: 7 });
    for (const page of [{ before: "0" }, { before: "-1" }, { after: "1e3" }, { before: "abc" }, { before: "3", after: "5" }]) {
      assert.equal(parseAuditQuery(page).errors.length, 1, JSON.stringify(page));
    }
  });
  it("takes the first of repeated parameters", () => {
    assert.equal(parseAuditQuery({ type: ["grant.denied", "grant.approved"] }).filters.type, "grant.denied");
  });
});

describe("auditQueryString", () => {
  it("keeps the filters that are set, adds the cursor, encodes", () => {
    const { values } = parseAuditQuery({ type: "grant.approved", client: "a&b", from: "" });
    assert.equal(auditQueryString(values, { before: 51 }), "?type=grant.approved&client=a%26b&before=51");
    assert.equal(auditQueryString(parseAuditQuery({}).values), "");
  });
});

const event: AuditEventRow = {
  seq: 3,
  at: new Date("2025-05-06T07:08:09.010Z"),
  type: "credential.connected",
  userId: "u_1",
  clientId: null,
  credentialId: "cr_1",
  requestId: null,
  data: { name: "Main", kind: "evm", address: "0xAbC" },
  prevHash: "a".repeat(64),
  hash: "b".repeat(64),
};

describe("exportLine", () => {
  it("is one line of canonical JSON with the data parsed and no userId", () => {
    const line = exportLine(event);
    assert.ok(!line.includes("\n"));
    assert.equal(
      line,
      `{"at":"2025-05-06T07:08:09.010Z","clientId":null,"credentialId":"cr_1",` +
        `"data":{"address":"0xAbC","kind":"evm","name":"Main"},"hash":"${"b".repeat(64)}","prevHash":"${"a".repeat(64)}",` +
        `"requestId":null,"seq":3,"type":"credential.connected"}`,
    );
    assert.deepEqual(JSON.parse(line).data, event.data);
  });
  it("stays on one line whatever the data holds", () => {
    assert.ok(!exportLine({ ...event, data: { name: "two\nlines\u2028" } }).includes("\n"));
  });
});

describe("summarizeEvent", () => {
  const names = { clients: new Map([["c1", "Claude"]]), credentials: new Map([["cr_1", "Main"]]) };
  it("says what happened in words, with credential names for ids", () => {
    assert.equal(summarizeEvent(event), "Wallet “Main” connected: 0xAbC");
    assert.equal(
      summarizeEvent({ type: "credential.connected", data: { name: "Cold", kind: "evm_watch", address: "0x1" } }),
      "Watch-only address “Cold” connected: 0x1",
    );
    assert.equal(
      summarizeEvent(
        {
          type: "grant.approved",
          data: {
            scope: "mcp",
            credentials: [
              { credential: "cr_1", mode: "approve" },
              { credential: "cr_gone", mode: "read" },
            ],
          },
        },
        names,
      ),
      "Access approved (mcp) to Main (approve), cr_gone (read)",
    );
    assert.equal(
      summarizeEvent({ type: "oauth.replay_detected", data: { presented: "refresh_token" } }),
      "A used refresh token was presented again",
    );
    assert.equal(summarizeEvent({ type: "client.revoked", data: { reason: "replay" } }), "Client revoked after a replay");
    assert.equal(
      summarizeEvent({ type: "token.issued", data: { scope: "mcp offline_access", withRefresh: true } }),
      "Access token issued (mcp offline_access) with a refresh token",
    );
    assert.equal(summarizeEvent({ type: "mcp.tool_called", data: { tool: "get_balance", outcome: "ok" } }), "An agent read a balance");
    assert.equal(summarizeEvent({ type: "mcp.tool_called", data: { tool: "sign_message", outcome: "ok" } }), "Tool sign_message: ok");
    assert.equal(
      summarizeEvent({ type: "request.transition", data: { kind: "send_transaction", from: "pending", to: "approved" } }),
      "Approved by you with a passkey: send a transaction",
    );
  });
  it("tells a request's story from its own events: who asked, what it sends to whom, how it was decided", () => {
    const alice = "0x000000000000000000000000000000000000A11c";
    const story: Names = {
      clients: new Map([["c1", "Payroll bot"]]),
      credentials: new Map(),
      contacts: { [alice.toLowerCase()]: "Alice" },
      requests: new Map([
        ["rq_1", { kind: "send_transaction", chainId: 31337, recipient: alice, value: "100000000000000000", call: false, txHash: "0xabc" }],
      ]),
    };
    const step = (data: Record<string, unknown>) =>
      summarizeEvent({ type: "request.transition", clientId: "c1", requestId: "rq_1", data }, story);
    assert.equal(step({ kind: "send_transaction", to: "pending", from: null }), "Payroll bot asked to send 0.1 ETH to Alice");
    assert.equal(step({ to: "submitted", txHash: "0xabc" }), "Sent 0.1 ETH to Alice — approved by you with a passkey");
    assert.equal(step({ to: "completed" }), "Sent 0.1 ETH to Alice: included in a block");
    assert.equal(step({ to: "rejected" }), "Rejected: send 0.1 ETH to Alice");
    assert.equal(step({ to: "failed", reason: "The transaction reverted" }), "Failed to send 0.1 ETH to Alice: The transaction reverted");
    assert.equal(
      summarizeEvent({ type: "request.transition", data: { kind: "sign_message", to: "approved" } }),
      "Signed a message — approved by you with a passkey",
    );
    // The local chain has no explorer configured: the hash is shown, never a made-up link.
    assert.deepEqual(transactionOf({ type: "request.transition", requestId: "rq_1", data: { to: "completed" } }, story), {
      hash: "0xabc",
      url: null,
    });
    assert.equal(transactionOf({ type: "request.transition", requestId: "rq_1", data: { to: "approved" } }, story), null);
  });
  it("says what a call through the wallet's DeleGator runs, not a call of 0 ETH to the wallet itself", () => {
    const wallet = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    const taker = "0x000000000000000000000000000000000000bEEF";
    const names: Names = {
      clients: new Map([["c1", "Payroll bot"]]),
      credentials: new Map(),
      contacts: { [taker.toLowerCase()]: "Taker" },
    };
    const asked = (runs: Record<string, unknown>) =>
      summarizeEvent(
        {
          type: "request.transition",
          clientId: "c1",
          data: { kind: "send_transaction", to: "pending", chainId: 31337, recipient: wallet, value: "0", call: true, runs },
        },
        names,
      );
    const send = { from: null, recipient: taker, value: "1000000000000000000", call: false };
    assert.equal(
      asked({ functionName: "execute", executions: [send], total: 1 }),
      `Payroll bot asked to run through execute on ${wallet}: send 1 ETH to Taker`,
    );
    assert.equal(
      asked({ functionName: "redeemDelegations", executions: [{ ...send, from: wallet, call: true }], total: 3 }),
      `Payroll bot asked to run through redeemDelegations on ${wallet}: call the contract Taker with 1 ETH from ${wallet}, and 2 more`,
    );
    assert.equal(
      asked({ functionName: "execute", unreadable: "it runs in try mode" }),
      `Payroll bot asked to call execute on ${wallet}, whose effect cannot be read (it runs in try mode)`,
    );
  });

  it("says a decision in the words the person decided on, and folds a request's events into one row", () => {
    const words = "Allow spending of unlimited USDC for 0x9A9f…41c2 on Base";
    const call: Names = {
      clients: new Map([["c1", "Payroll bot"]]),
      credentials: new Map(),
      requests: new Map([
        ["rq_2", { kind: "send_transaction", chainId: 31337, recipient: address(1), value: "0", call: true, words }],
        ["rq_3", { kind: "send_transaction", chainId: 31337, recipient: address(2), value: "0", call: true }],
      ]),
    };
    const step = (requestId: string, data: Record<string, unknown>) =>
      summarizeEvent({ type: "request.transition", clientId: "c1", requestId, data }, call);
    assert.equal(step("rq_2", { to: "rejected", words }), "Rejected: allow spending of unlimited USDC for 0x9A9f…41c2 on Base");
    assert.equal(step("rq_2", { to: "pending" }), "Payroll bot asked to allow spending of unlimited USDC for 0x9A9f…41c2 on Base");
    // A decision recorded before the words were: what its events name.
    assert.equal(step("rq_3", { to: "rejected" }), `Rejected: call the contract ${address(2)} with 0 ETH`);

    const event = (seq: number, type: string, requestId: string | null, data: Record<string, unknown> = {}) =>
      ({ seq, type, requestId, data, at: new Date(), clientId: "c1", credentialId: null }) as unknown as AuditEventRow;
    const page = [
      event(9, "request.transition", "rq_2", { to: "rejected" }),
      event(8, "user.signed_in", null),
      event(7, "request.transition", "rq_2", { to: "pending" }),
      event(6, "mcp.tool_called", "rq_2", { tool: "send_transaction", outcome: "ok" }),
      event(5, "mcp.tool_called", "rq_3", { tool: "send_transaction", outcome: "ok" }),
    ];
    const rows = foldByRequest(page);
    assert.equal(summarizeRow(rows[0], call), "Rejected: allow spending of unlimited USDC for 0x9A9f…41c2 on Base");
    // An approval reads as the decision, then what came of it.
    const sent = foldByRequest([
      event(4, "request.transition", "rq_2", { kind: "send_transaction", to: "completed" }),
      event(3, "request.transition", "rq_2", { kind: "send_transaction", to: "submitted", txHash: "0xabc" }),
      event(2, "request.transition", "rq_2", { kind: "send_transaction", to: "approved", acknowledged: "I understand: it" }),
    ]);
    assert.equal(sent[0].lead.seq, 4);
    assert.equal(
      summarizeRow(sent[0], call),
      "Approved by you with a passkey: allow spending of unlimited USDC for 0x9A9f…41c2 on Base; you confirmed: “I understand: it” · " +
        "included in a block",
    );
    assert.deepEqual(
      rows.map((row) => [row.lead.seq, row.steps.map((one) => one.seq)]),
      [
        [9, [9, 7, 6]],
        [8, [8]],
        [5, [5]],
      ],
    );
  });
  it("tells reads apart from decisions", () => {
    assert.equal(isRead({ type: "mcp.tool_called", data: { tool: "get_balance", outcome: "ok" } }), true);
    assert.equal(isRead({ type: "mcp.tool_called", data: { tool: "send_transaction", outcome: "ok" } }), false);
    assert.equal(isRead({ type: "mcp.tool_called", data: { tool: "cancel_request", outcome: "ok" } }), false);
    assert.equal(isRead({ type: "grant.approved", data: { tool: "get_balance" } }), false);
  });
  it("has a sentence for every event type and survives data of any shape", () => {
    for (const type of ["user.signed_up", "grant.denied", "api_key.issued", "client.registered", "request.transition", "unknown.type"]) {
      for (const data of [{}, { credentials: "not a list", name: { nested: true }, redirectHosts: 3 }, { credentials: [null, 5] }]) {
        assert.equal(typeof summarizeEvent({ type, data }, names), "string");
      }
    }
    assert.equal(summarizeEvent({ type: "unknown.type", data: { a: 1, b: null, c: { d: "e" } } }), 'a: 1, b: none, c: {"d":"e"}');
  });
});

describe("formatAuditTime", () => {
  it("shows UTC to the second, the zone named once on the page", () => {
    assert.equal(formatAuditTime(new Date("2025-05-06T07:08:09.010Z")), "2025-05-06 07:08:09");
  });
});
