import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clientAddress } from "./client-ip";

const LOOPBACK = ["127.0.0.0/8", "::1/128"];

describe("the client's address", () => {
  it("with no proxy trusted, is the connection's, whatever X-Forwarded-For says", () => {
    assert.equal(clientAddress("203.0.113.7", null, 0), "203.0.113.7");
    assert.equal(clientAddress("203.0.113.7", "10.0.0.1", 0), "203.0.113.7");
    assert.equal(clientAddress("203.0.113.7", "10.0.0.1, 10.0.0.2", LOOPBACK), "203.0.113.7");
  });

  it("behind proxies trusted by address, is the first entry from the right not written by one", () => {
    assert.equal(clientAddress("127.0.0.1", "198.51.100.4", LOOPBACK), "198.51.100.4");
    // A client-chosen entry before the one the proxy appended changes nothing.
    assert.equal(clientAddress("127.0.0.1", "10.9.9.9, 198.51.100.4", LOOPBACK), "198.51.100.4");
    // Two proxies in a row, both trusted.
    assert.equal(clientAddress("10.0.0.5", "198.51.100.4, 10.0.0.9", ["10.0.0.0/8"]), "198.51.100.4");
    // A connection from an address not trusted: its X-Forwarded-For is its own claim.
    assert.equal(clientAddress("198.51.100.4", "10.0.0.1", ["10.0.0.0/8"]), "198.51.100.4");
    // Nothing forwarded, or every hop trusted: the leftmost there is.
    assert.equal(clientAddress("127.0.0.1", null, LOOPBACK), "127.0.0.1");
    assert.equal(clientAddress("127.0.0.1", "127.0.0.2", LOOPBACK), "127.0.0.2");
  });

  it("behind a number of proxies, is that many hops from the connection", () => {
    assert.equal(clientAddress("127.0.0.1", "10.9.9.9, 198.51.100.4", 1), "198.51.100.4");
    assert.equal(clientAddress("127.0.0.1", "10.9.9.9, 198.51.100.4, 10.0.0.2", 2), "198.51.100.4");
    assert.equal(clientAddress("127.0.0.1", "198.51.100.4", 3), "198.51.100.4");
  });

  it("reads an IPv4-mapped IPv6 connection as IPv4, and matches IPv6 ranges", () => {
    assert.equal(clientAddress("::ffff:127.0.0.1", "198.51.100.4", LOOPBACK), "198.51.100.4");
    assert.equal(clientAddress("::ffff:203.0.113.7", "198.51.100.4", LOOPBACK), "203.0.113.7");
    assert.equal(clientAddress("::1", "2001:db8::1", LOOPBACK), "2001:db8::1");
  });

  it("without the connection (next start), takes X-Forwarded-For's last entry as it, as before", () => {
    assert.equal(clientAddress(null, "10.9.9.9, 198.51.100.4", 0), "198.51.100.4");
    assert.equal(clientAddress(null, "10.9.9.9, 198.51.100.4", 1), "198.51.100.4");
    assert.equal(clientAddress(null, "10.9.9.9, 198.51.100.4", 2), "10.9.9.9");
    assert.equal(clientAddress(null, null, 0), "unknown");
  });
});
