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
  throttle.succeeded("a");
  assert.equal(throttle.retryAfter("a"), 0);
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
