import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clientAddress } from "./client-ip";

const LOOPBACK = ["127.0.0.0/8", "::1/128"];
/** The default prefix length for IPv6 (RATE_LIMIT_IPV6_PREFIX). */
const V6 = 64;

describe("the client's address", () => {
  it("with no proxy trusted, is the connection's, whatever X-Forwarded-For says", () => {
    assert.equal(clientAddress("203.0.113.7", null, 0, V6), "203.0.113.7");
    assert.equal(clientAddress("203.0.113.7", "10.0.0.1", 0, V6), "203.0.113.7");
    assert.equal(clientAddress("203.0.113.7", "10.0.0.1, 10.0.0.2", LOOPBACK, V6), "203.0.113.7");
  });

  it("behind proxies trusted by address, is the first entry from the right not written by one", () => {
    assert.equal(clientAddress("127.0.0.1", "198.51.100.4", LOOPBACK, V6), "198.51.100.4");
    // A client-chosen entry before the one the proxy appended changes nothing.
    assert.equal(clientAddress("127.0.0.1", "10.9.9.9, 198.51.100.4", LOOPBACK, V6), "198.51.100.4");
    // Two proxies in a row, both trusted.
    assert.equal(clientAddress("10.0.0.5", "198.51.100.4, 10.0.0.9", ["10.0.0.0/8"], V6), "198.51.100.4");
    // A connection from an address not trusted: its X-Forwarded-For is its own claim.
    assert.equal(clientAddress("198.51.100.4", "10.0.0.1", ["10.0.0.0/8"], V6), "198.51.100.4");
    // Nothing forwarded, or every hop trusted: the leftmost there is.
    assert.equal(clientAddress("127.0.0.1", null, LOOPBACK, V6), "127.0.0.1");
    assert.equal(clientAddress("127.0.0.1", "127.0.0.2", LOOPBACK, V6), "127.0.0.2");
  });

  it("behind a number of proxies, is that many hops from the connection", () => {
    assert.equal(clientAddress("127.0.0.1", "10.9.9.9, 198.51.100.4", 1, V6), "198.51.100.4");
    assert.equal(clientAddress("127.0.0.1", "10.9.9.9, 198.51.100.4, 10.0.0.2", 2, V6), "198.51.100.4");
    assert.equal(clientAddress("127.0.0.1", "198.51.100.4", 3, V6), "198.51.100.4");
  });

  it("reads an IPv4-mapped IPv6 connection as IPv4, and matches IPv6 ranges", () => {
    assert.equal(clientAddress("::ffff:127.0.0.1", "198.51.100.4", LOOPBACK, V6), "198.51.100.4");
    assert.equal(clientAddress("::ffff:203.0.113.7", "198.51.100.4", LOOPBACK, V6), "203.0.113.7");
    assert.equal(clientAddress("::1", "2001:db8::1", LOOPBACK, V6), "2001:db8::/64");
  });

  it("without the connection (next start), takes X-Forwarded-For's last entry as it, as before", () => {
    assert.equal(clientAddress(null, "10.9.9.9, 198.51.100.4", 0, V6), "198.51.100.4");
    assert.equal(clientAddress(null, "10.9.9.9, 198.51.100.4", 1, V6), "198.51.100.4");
    assert.equal(clientAddress(null, "10.9.9.9, 198.51.100.4", 2, V6), "10.9.9.9");
    assert.equal(clientAddress(null, null, 0, V6), "unknown");
  });

  it("counts an IPv6 client by its /64, however many of its addresses it uses; another /64 apart", () => {
    const key = "2001:db8:1:2::/64";
    for (const address of ["2001:db8:1:2::1", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2:ffff:ffff:ffff:ffff"]) {
      assert.equal(clientAddress(address, null, 0, V6), key);
      assert.equal(clientAddress("::1", address, LOOPBACK, V6), key, "as a trusted proxy passes it on");
    }
    assert.equal(clientAddress("2001:db8:1:3::1", null, 0, V6), "2001:db8:1:3::/64");
    // A link-local address's zone names an interface of this host, not the client.
    assert.equal(clientAddress("fe80::1%eth0", null, 0, V6), "fe80::/64");
  });

  it("counts IPv4, and IPv4-mapped IPv6 as its IPv4, by the whole address", () => {
    assert.equal(clientAddress("203.0.113.7", null, 0, V6), "203.0.113.7");
    assert.equal(clientAddress("::ffff:203.0.113.7", null, 0, V6), "203.0.113.7");
    assert.equal(clientAddress("::ffff:cb00:7108", null, 0, V6), "203.0.113.8");
    assert.equal(clientAddress("203.0.113.9", null, 0, 1), "203.0.113.9");
  });

  it("takes the IPv6 prefix it is given, on a 16-bit boundary or not", () => {
    const address = "2001:db8:1:2ff:1:2:3:4";
    assert.equal(clientAddress(address, null, 0, 48), "2001:db8:1::/48");
    assert.equal(clientAddress(address, null, 0, 56), "2001:db8:1:200::/56");
    assert.equal(clientAddress(address, null, 0, 60), "2001:db8:1:2f0::/60");
    assert.equal(clientAddress(address, null, 0, 128), "2001:db8:1:2ff:1:2:3:4/128");
    assert.equal(clientAddress(address, null, 0, 1), "::/1");
    assert.equal(clientAddress("ffff::1", null, 0, 1), "8000::/1");
    assert.equal(clientAddress(address, null, 0, V6), "2001:db8:1:2ff::/64", "each prefix's answer is its own");
  });
});
