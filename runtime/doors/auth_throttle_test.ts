import assert from "node:assert/strict";
import { AuthThrottle, clientKey } from "./auth_throttle.ts";

Deno.test("AuthThrottle doubles an address's wait with each failure past the allowance, up to the cap", () => {
  let now = 0;
  const throttle = new AuthThrottle({
    freeFailures: 2,
    baseMs: 1000,
    maxMs: 8000,
    now: () => now,
  });
  const waits: number[] = [];
  for (let i = 0; i < 7; i++) {
    throttle.failed("a");
    waits.push(throttle.retryAfter("a"));
  }
  assert.deepEqual(waits, [0, 0, 1, 2, 4, 8, 8]);
  assert.equal(throttle.retryAfter("b"), 0);
  now = 7999;
  assert.equal(throttle.retryAfter("a"), 1);
  now = 8000;
  assert.equal(throttle.retryAfter("a"), 0);
  // Past the wait, one more failure makes it wait again at the cap.
  throttle.failed("a");
  assert.equal(throttle.retryAfter("a"), 8);
});

Deno.test("AuthThrottle forgets an address long after its last failure", () => {
  let now = 0;
  const throttle = new AuthThrottle({
    freeFailures: 1,
    maxMs: 1000,
    now: () => now,
  });
  throttle.failed("a");
  throttle.failed("a");
  assert.equal(throttle.retryAfter("a"), 1);
  now = 2001;
  throttle.failed("a");
  assert.equal(throttle.retryAfter("a"), 0);
  throttle.failed("b");
  assert.equal(throttle.size, 2);
  now = 5000;
  throttle.failed("c");
  assert.equal(throttle.size, 1);
});

Deno.test("AuthThrottle remembers at most maxClients addresses, forgetting the oldest", () => {
  const throttle = new AuthThrottle({ maxClients: 100 });
  for (let i = 0; i < 10_000; i++) throttle.failed(`10.0.${i >> 8}.${i & 255}`);
  assert.equal(throttle.size, 100);
});

Deno.test("clientKey() keys IPv4 by address and IPv6 by /64", () => {
  const key = (hostname: string) =>
    clientKey({ remoteAddr: { transport: "tcp", hostname, port: 1 } });
  assert.equal(key("127.0.0.1"), "127.0.0.1");
  assert.equal(key("::1"), "::1");
  assert.equal(key("::ffff:127.0.0.1"), "127.0.0.1");
  assert.equal(key("2001:db8::1"), "2001:db8:0:0::/64");
  assert.equal(key("2001:0db8:0:0:ffff::2"), "2001:db8:0:0::/64");
  assert.equal(
    clientKey({ remoteAddr: { transport: "unix", path: "/tmp/s" } }),
    "",
  );
  assert.equal(clientKey({}), "");
});

// The /64 key of the i-th /64 of 2001:db8:1::/48.
const in48 = (i: number) =>
  clientKey({
    remoteAddr: {
      transport: "tcp",
      hostname: `2001:db8:1:${i.toString(16)}::1`,
      port: 1,
    },
  });

Deno.test("AuthThrottle holds a whole /48 once its /64s together fail too often", () => {
  let now = 0;
  const throttle = new AuthThrottle({ now: () => now });
  // Every /64 stays within its own allowance of 5, and the attacker moves
  // on past every network that is held...
  let tried = 0;
  for (let i = 0; i < 0x10000 && tried < 1000; i++) {
    for (let j = 0; j < 4 && throttle.retryAfter(in48(i)) === 0; j++) {
      throttle.failed(in48(i));
      tried++;
    }
  }
  // ...yet the /48 is held long before a thousand guesses.
  assert.ok(tried < 200, `${tried} guesses`);
  assert.ok(throttle.retryAfter(in48(4000)) > 0);
  assert.ok(throttle.retryAfter(in48(0xffff)) > 0);
  // Another /48 is not.
  assert.equal(throttle.retryAfter("2001:db8:2:0::/64"), 0);
  now = 300_000 * 3;
  assert.equal(throttle.retryAfter(in48(4000)), 0);
});

Deno.test("AuthThrottle lets one /64 at the cap try for hours without holding its neighbours", () => {
  let now = 0;
  const throttle = new AuthThrottle({ now: () => now });
  const attacker = in48(0);
  for (let tries = 0; now < 6 * 3_600_000; tries++) {
    now += throttle.retryAfter(attacker) * 1000;
    throttle.failed(attacker);
  }
  assert.ok(throttle.retryAfter(attacker) > 0);
  assert.equal(throttle.retryAfter(in48(1)), 0);
  assert.equal(throttle.retryAfter(in48(0x100)), 0);
});

Deno.test("AuthThrottle never forgets an address still waiting to make room for new ones", () => {
  const throttle = new AuthThrottle({ maxClients: 100, now: () => 0 });
  for (let i = 0; i < 6; i++) throttle.failed("192.0.2.1");
  assert.equal(throttle.retryAfter("192.0.2.1"), 1);
  for (let i = 0; i < 10_000; i++) throttle.failed(`10.0.${i >> 8}.${i & 255}`);
  assert.equal(throttle.retryAfter("192.0.2.1"), 1);
  assert.ok(throttle.size <= 100);
});

Deno.test("AuthThrottle, full of waiting addresses, gives every new one a single shared allowance", () => {
  let now = 0;
  const throttle = new AuthThrottle({ maxClients: 100, now: () => now });
  const address = (i: number) => `10.0.${i >> 8}.${i & 255}`;
  for (let i = 0; i < 100; i++) {
    for (let j = 0; j < 6; j++) throttle.failed(address(i));
  }
  // Five failures from five new addresses use up what the newcomers share.
  for (let i = 100; i < 105; i++) {
    assert.equal(throttle.retryAfter(address(i)), 0);
    throttle.failed(address(i));
  }
  throttle.failed(address(105));
  assert.equal(throttle.retryAfter(address(4000)), 1);
  assert.equal(throttle.size, 100);
  // Once the waits are over, the first of them is forgotten for a newcomer.
  now = 1000;
  throttle.failed(address(4001));
  throttle.failed(address(0));
  assert.equal(throttle.retryAfter(address(0)), 0);
  throttle.failed(address(2));
  assert.equal(throttle.retryAfter(address(2)), 2);
});

Deno.test("clientKey() keys an IPv4 client behind a translator by its IPv4 address", () => {
  const key = (hostname: string) =>
    clientKey({ remoteAddr: { transport: "tcp", hostname, port: 1 } });
  // NAT64's well-known prefix (RFC 6052), in both spellings.
  assert.equal(key("64:ff9b::a00:1"), "10.0.0.1");
  assert.equal(key("64:ff9b::10.0.0.2"), "10.0.0.2");
  assert.equal(key("::ffff:a00:3"), "10.0.0.3");
  // A local-use prefix (RFC 8215) embeds it where its length says: the
  // whole address names one client.
  assert.notEqual(key("64:ff9b:1::a00:1"), key("64:ff9b:1::a00:2"));
  assert.equal(key("64:ff9b:1::a00:1"), key("64:ff9b:1:0::a00:1"));
  // Teredo (RFC 4380): the client's address, inverted, ends the address.
  assert.equal(key("2001:0:4136:e378:8000:63bf:f5ff:fffe"), "10.0.0.1");
  // A zone is not part of the address.
  assert.equal(key("fe80::1%eth0"), "fe80:0:0:0::/64");
});
