import assert from "node:assert/strict";
import {
  allowedByAll,
  hostMatches,
  isPublicAddress,
  resolveHost,
} from "./targets.ts";

Deno.test("isPublicAddress() refuses every non-public range and form", () => {
  const refused = [
    "127.0.0.1",
    "127.255.255.254",
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254", // cloud metadata
    "169.254.0.1",
    "100.64.0.1",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1", // mapped, hex form
    "::ffff:169.254.169.254",
    "::127.0.0.1", // IPv4-compatible
    "64:ff9b::10.0.0.1", // NAT64 of a private address
    "2002:7f00:1::", // 6to4 of loopback
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fe80::1%eth0",
    "ff02::1",
    "2001:db8::1",
    "2001:0::1", // Teredo
    "not-an-ip",
    "1.2.3",
    "1.2.3.256",
  ];
  for (const ip of refused) assert.equal(isPublicAddress(ip), false, ip);
  const allowed = [
    "93.184.215.14",
    "8.8.8.8",
    "172.32.0.1",
    "2606:4700::6810:84e5",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
  ];
  for (const ip of allowed) assert.equal(isPublicAddress(ip), true, ip);
});

Deno.test("isPublicAddress() reads an embedded IPv4 only under 64:ff9b::/96", () => {
  // A /48 translator (the local-use prefix 64:ff9b:1::/48, RFC 8215) takes
  // the IPv4 address from bits 48-63 and 72-87 (RFC 6052): this one is
  // 127.0.0.1 there, while its last 32 bits read 8.8.8.8.
  assert.equal(isPublicAddress("64:ff9b:1:7f00:0:100:808:808"), false);
  assert.equal(isPublicAddress("64:ff9b:1::8.8.8.8"), false);
  // Outside the /96 the rest of 64:ff9b::/32 is not global either.
  assert.equal(isPublicAddress("64:ff9b:0:0:1::8.8.8.8"), false);
  assert.equal(isPublicAddress("64:ff9b::8.8.8.8"), true);
});

Deno.test("hostMatches() matches hosts and ports like --allow-net", () => {
  const u = (s: string) => new URL(s);
  assert.ok(hostMatches(u("https://api.example.com/x"), "api.example.com"));
  assert.ok(hostMatches(u("https://API.example.com:8443/"), "api.example.com"));
  assert.ok(hostMatches(u("https://api.example.com/"), "api.example.com:443"));
  assert.ok(!hostMatches(u("http://api.example.com/"), "api.example.com:443"));
  assert.ok(
    !hostMatches(u("https://evil-api.example.com/"), "api.example.com"),
  );
  assert.ok(
    !hostMatches(u("https://api.example.com.evil.io/"), "api.example.com"),
  );
  assert.ok(hostMatches(u("http://[::1]:80/"), "[::1]"));
  assert.ok(hostMatches(u("http://[::1]:80/"), "[::1]:80"));
  assert.ok(hostMatches(u("http://[::1]:80/"), "::1"));
  assert.ok(hostMatches(u("http://[::ffff:127.0.0.1]/"), "[::ffff:127.0.0.1]"));
  assert.ok(hostMatches(u("http://[0:0::1]:8/"), "[::0:1]:8"));
  assert.ok(hostMatches(u("https://anything.io/"), "*"));
  assert.ok(!hostMatches(u("https://anything.io/"), "anything.io:*"));
});

Deno.test("allowedByAll() needs a match in every list", () => {
  const url = new URL("https://a.io/");
  assert.ok(allowedByAll(url, [["a.io"], ["*", "b.io"]]));
  assert.ok(!allowedByAll(url, [["a.io"], []]));
});

Deno.test("isPublicAddress() reads an address before its zone, and a run of % as nothing", () => {
  assert.equal(isPublicAddress("2606:4700::1%eth0"), true);
  assert.equal(isPublicAddress("fe80::1%eth0"), false);
  // Took seconds with the zone cut by /%.*$/ (backtracking before the "\n").
  assert.equal(isPublicAddress("%".repeat(20_000) + "\nx"), false);
});

Deno.test("isPublicAddress() holds each range to its bounds", () => {
  // [address, public]: the first and last of each refused range and the
  // addresses either side of it, in every form that embeds an IPv4 one.
  const cases: Array<[string, boolean]> = [
    ["0.255.255.255", false],
    ["1.0.0.0", true],
    ["9.255.255.255", true],
    ["10.255.255.255", false],
    ["11.0.0.0", true],
    ["100.63.255.255", true],
    ["100.64.0.0", false],
    ["100.127.255.255", false],
    ["100.128.0.0", true],
    ["126.255.255.255", true],
    ["128.0.0.0", true],
    ["169.253.255.255", true],
    ["169.254.255.255", false],
    ["169.255.0.0", true],
    ["172.15.255.255", true],
    ["172.16.0.0", false],
    ["192.0.0.255", false],
    ["192.0.1.0", true],
    ["192.0.2.0", false],
    ["192.0.2.255", false],
    ["192.0.3.0", true],
    ["192.88.98.255", true],
    ["192.88.99.0", false],
    ["192.88.99.255", false],
    ["192.88.100.0", true],
    ["192.167.255.255", true],
    ["192.168.255.255", false],
    ["192.169.0.0", true],
    ["198.17.255.255", true],
    ["198.18.0.0", false],
    ["198.19.255.255", false],
    ["198.20.0.0", true],
    ["198.51.99.255", true],
    ["198.51.100.1", false],
    ["198.51.101.0", true],
    ["203.0.112.255", true],
    ["203.0.113.1", false],
    ["203.0.114.0", true],
    ["223.255.255.255", true],
    ["224.0.0.0", false],
    // Global unicast is 2000::/3.
    ["1fff:ffff::1", false],
    ["2000::1", true],
    ["3fff:ffff::1", true],
    ["4000::1", false],
    ["FE80::1", false],
    ["2606:4700::6810:84E5", true],
    // Teredo and documentation inside it.
    ["2001::1", false],
    ["2001:0:ffff::1", false],
    ["2001:1::1", true],
    ["2001:db7:ffff::1", true],
    ["2001:db8:ffff::1", false],
    ["2001:db9::1", true],
    // 6to4 reads the IPv4 address from bits 16-47.
    ["2002:808:808::1", true],
    ["2002:a00:1::", false],
    ["2002:c0a8:101::1", false],
    ["2002:e000::1", false],
    ["2002:dfff:ffff::1", true],
    // IPv4-compatible and IPv4-mapped.
    ["::8.8.8.8", true],
    ["::10.0.0.1", false],
    ["::1:8.8.8.8", false],
    ["::ffff:0.0.0.0", false],
    ["::ffff:100.64.0.1", false],
    ["::ffff:808:404", true],
    // NAT64's well-known /96.
    ["64:ff9b::7f00:1", false],
    ["64:ff9b::808:808", true],
    ["64:ff9b::169.254.169.254", false],
    // Not addresses.
    ["1:2:3:4:5:6:7:8:9", false],
    ["1::2::3", false],
    ["::ffff:1.2.3.256", false],
    ["12345::1", false],
    ["[::1]", false],
    ["", false],
  ];
  for (const [ip, expected] of cases) {
    assert.equal(isPublicAddress(ip), expected, ip);
  }
});

Deno.test("isPublicAddress() refuses an IPv4 address with a leading zero", () => {
  // inet_aton reads "012" as octal (10): the text checked must be the
  // address connected to, so only the canonical form passes.
  assert.equal(isPublicAddress("012.0.0.1"), false);
  assert.equal(isPublicAddress("08.8.8.8"), false);
  assert.equal(isPublicAddress("::ffff:012.0.0.1"), false);
});

Deno.test("hostMatches() reads a bare IPv6 entry as an address without a port", () => {
  const u = (s: string) => new URL(s);
  assert.ok(hostMatches(u("http://[::1:80]/"), "::1:80"));
  assert.ok(!hostMatches(u("http://[::1]:80/"), "::1:80"));
  assert.ok(hostMatches(u("http://[2001:db8::1]:8443/"), "2001:DB8:0::1"));
  // An IPv4 tail, as in the bracketed form.
  assert.ok(hostMatches(u("http://[::ffff:127.0.0.1]/"), "::ffff:127.0.0.1"));
  assert.ok(!hostMatches(u("http://[fe80::1]/"), "fe80::1%eth0"));
  assert.ok(!hostMatches(u("http://[::1]/"), "[::1"));
  assert.ok(hostMatches(u("https://a.example./"), "a.example.:443"));
});

Deno.test("resolveHost() gives up when its signal aborts, and leaves no listener", async (t) => {
  // Counts the signal's abort listeners through its own methods.
  const watched = () => {
    const controller = new AbortController();
    const signal = controller.signal;
    const count = { added: 0, removed: 0 };
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<typeof add>) => {
      count.added++;
      add(...args);
    };
    signal.removeEventListener = (...args: Parameters<typeof remove>) => {
      count.removed++;
      remove(...args);
    };
    return { controller, signal, count };
  };
  await t.step("aborted while the name resolves", async () => {
    const { controller, signal, count } = watched();
    // The lookup answers from another thread: the abort comes first.
    const found = resolveHost("localhost", signal);
    controller.abort(new Error("stopped"));
    await assert.rejects(found, /stopped/);
    assert.equal(count.removed, count.added);
  });
  await t.step("resolved", async () => {
    const { signal, count } = watched();
    assert.ok((await resolveHost("localhost", signal)).length > 0);
    assert.equal(count.added, 1);
    assert.equal(count.removed, 1);
  });
});
