import assert from "node:assert/strict";
import { Hono } from "hono";
import { createDoor } from "./guard.ts";
import { AuthThrottle } from "./auth_throttle.ts";

const TOKEN = "right-token";

function from(address: string): Deno.ServeHandlerInfo {
  return {
    remoteAddr: { transport: "tcp", hostname: address, port: 5000 },
    completed: Promise.resolve(),
  };
}

// A door in front of a handler that counts what reached it.
function doorFor(options: { tokens?: string[]; now?: () => number } = {}) {
  const reached: string[] = [];
  const door = createDoor({
    listen: { hostname: "127.0.0.1" },
    tokens: options.tokens ?? [TOKEN],
    throttle: new AuthThrottle({ now: options.now }),
  });
  const fetch = door.guard((request) => {
    reached.push(new URL(request.url).pathname);
    const login = new URL(request.url).pathname === "/login";
    if (login) {
      return request.text().then((body) =>
        new Response(null, { status: body === TOKEN ? 303 : 401 })
      );
    }
    return new Response("ok");
  });
  return { fetch, reached };
}

function bearer(token: string, host = "127.0.0.1:8787"): Request {
  return new Request("http://127.0.0.1:8787/mcp", {
    method: "POST",
    headers: { host, authorization: `Bearer ${token}` },
  });
}

Deno.test("the door refuses a foreign Host or Origin with 403 before the handler runs", async () => {
  const { fetch, reached } = doorFor({ tokens: [] });
  const evil = await fetch(
    new Request("http://127.0.0.1:8787/mcp", {
      headers: { host: "a.evil:8787", origin: "http://a.evil:8787" },
    }),
  );
  assert.equal(evil.status, 403);
  assert.deepEqual(await evil.json(), {
    error:
      'Host "a.evil:8787" is not one this host answers to: add it to listen.allowed_hosts',
  });
  const page = await fetch(
    new Request("http://127.0.0.1:8787/mcp", {
      headers: { host: "127.0.0.1:8787", origin: "http://evil.example" },
    }),
  );
  assert.equal(page.status, 403);
  await page.body?.cancel();
  assert.deepEqual(reached, []);
});

Deno.test("the door makes an address wait after repeated wrong tokens, without checking its next ones", async () => {
  let now = 0;
  const { fetch, reached } = doorFor({ now: () => now });
  for (let i = 0; i < 5; i++) {
    const wrong = await fetch(bearer(`guess-${i}`), from("10.0.0.1"));
    assert.equal(wrong.status, 200); // the route refuses it, not the door
    await wrong.body?.cancel();
  }
  const wrong = await fetch(bearer("guess-5"), from("10.0.0.1"));
  await wrong.body?.cancel();
  const blocked = await fetch(bearer(TOKEN), from("10.0.0.1"));
  assert.equal(blocked.status, 429);
  assert.equal(blocked.headers.get("retry-after"), "1");
  assert.match((await blocked.json()).error, /try again in 1 s/);
  assert.equal(reached.length, 6);
  // Another address, and a request without credentials, are untouched.
  const other = await fetch(bearer(TOKEN), from("10.0.0.2"));
  assert.equal(other.status, 200);
  await other.body?.cancel();
  const plain = await fetch(
    new Request("http://127.0.0.1:8787/health"),
    from("10.0.0.1"),
  );
  assert.equal(plain.status, 200);
  await plain.body?.cancel();
  // After the wait the right token works, but does not start the address
  // afresh: its next wrong one makes it wait again, 2 s.
  now = 1000;
  const right = await fetch(bearer(TOKEN), from("10.0.0.1"));
  assert.equal(right.status, 200);
  await right.body?.cancel();
  await (await fetch(bearer("again"), from("10.0.0.1"))).body?.cancel();
  const again = await fetch(bearer(TOKEN), from("10.0.0.1"));
  assert.equal(again.status, 429);
  assert.equal(again.headers.get("retry-after"), "2");
  await again.body?.cancel();
});

Deno.test("a holder of one token gets no fresh guesses at another from using its own", async () => {
  let now = 0;
  const { fetch } = doorFor({ tokens: [TOKEN, "ops"], now: () => now });
  // Five guesses at the admin's token, then its own token, again and again:
  // each right request used to clear the count.
  const statuses: number[] = [];
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 5; i++) {
      const guess = await fetch(bearer(`op${round}${i}`), from("10.0.0.5"));
      statuses.push(guess.status);
      await guess.body?.cancel();
    }
    now += 60_000; // past any wait
    await (await fetch(bearer(TOKEN), from("10.0.0.5"))).body?.cancel();
  }
  // 5 free guesses, then one a round after each wait: 8 of 20 checked.
  assert.equal(statuses.filter((s) => s !== 429).length, 5 + 3);
});

Deno.test("the sign-in form's wrong tokens count when the request also carries a right bearer", async () => {
  const { fetch } = doorFor({ now: () => 0 });
  const login = (form: string) =>
    fetch(
      new Request("http://127.0.0.1:8787/login", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}` },
        body: form,
      }),
      from("10.0.0.8"),
    );
  for (let i = 0; i < 6; i++) {
    const wrong = await login(`guess-${i}`);
    assert.equal(wrong.status, 401);
  }
  const blocked = await login("guess-6");
  assert.equal(blocked.status, 429);
  await blocked.body?.cancel();
});

Deno.test("the door counts the sign-in form's 401 answers as wrong tokens", async () => {
  let now = 0;
  const { fetch } = doorFor({ now: () => now });
  const login = (token: string) =>
    fetch(
      new Request("http://127.0.0.1:8787/login", {
        method: "POST",
        body: token,
      }),
      from("10.0.0.9"),
    );
  for (let i = 0; i < 6; i++) {
    assert.equal((await login("nope")).status, 401);
  }
  const blocked = await login(TOKEN);
  assert.equal(blocked.status, 429);
  await blocked.body?.cancel();
  now = 1000;
  assert.equal((await login(TOKEN)).status, 303);
  assert.equal((await login("nope")).status, 401);
});

Deno.test("the door counts wrong tokens on every spelling of the sign-in path the router accepts", async () => {
  // The router decodes percent escapes and the URL parser removes dot
  // segments, so "/%6Cogin" and "/a/../login" reach the form too.
  const app = new Hono().post("/login", async (c) => {
    const right = await c.req.text() === TOKEN;
    return c.body(null, right ? 303 : 401);
  });
  const door = createDoor({
    listen: { hostname: "127.0.0.1" },
    tokens: [TOKEN],
    throttle: new AuthThrottle({ now: () => 0 }),
  });
  const fetch = door.guard((request) => app.fetch(request));
  const paths = ["/%6Cogin", "/%6c%6F%67%69%6e", "/a/../login", "/%6Cogin?x#y"];
  for (const path of paths) {
    const client = from(`10.0.1.${paths.indexOf(path)}`);
    const login = (token: string) =>
      fetch(
        new Request(`http://127.0.0.1:8787${path}`, {
          method: "POST",
          body: token,
        }),
        client,
      );
    for (let i = 0; i < 6; i++) {
      assert.equal((await login("nope")).status, 401, path);
    }
    const blocked = await login(TOKEN);
    assert.equal(blocked.status, 429, path);
    await blocked.body?.cancel();
  }
});

Deno.test("without tokens the door throttles nothing", async () => {
  const { fetch } = doorFor({ tokens: [] });
  for (let i = 0; i < 20; i++) {
    const res = await fetch(bearer("anything"), from("10.0.0.1"));
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }
});

Deno.test("the door holds a /48 whose /64s take turns guessing, and no one else", async () => {
  const { fetch } = doorFor({ now: () => 0 });
  const status = async (token: string, address: string) => {
    const res = await fetch(bearer(token), from(address));
    await res.body?.cancel();
    return res.status;
  };
  let guesses = 0;
  for (let i = 0; i < 1000 && guesses < 1000; i++) {
    for (let j = 0; j < 4; j++) {
      if (await status("wrong", `2001:db8:1:${i.toString(16)}::1`) === 429) {
        break;
      }
      guesses++;
    }
  }
  assert.ok(guesses < 200, `${guesses} guesses`);
  assert.equal(await status(TOKEN, "2001:db8:1:ffff::1"), 429);
  assert.equal(await status(TOKEN, "2001:db8:2::1"), 200);
});

Deno.test("the door counts IPv4 clients behind NAT64 one by one", async () => {
  const { fetch } = doorFor({ now: () => 0 });
  for (let i = 0; i < 6; i++) {
    const res = await fetch(bearer("wrong"), from("64:ff9b::c000:201"));
    await res.body?.cancel();
  }
  const held = await fetch(bearer(TOKEN), from("64:ff9b::c000:201"));
  assert.equal(held.status, 429);
  await held.body?.cancel();
  const other = await fetch(bearer(TOKEN), from("64:ff9b::c000:202"));
  assert.equal(other.status, 200);
  await other.body?.cancel();
});

Deno.test("a sign-in whose form never ends holds no other sign-in from its network", async () => {
  // Behind a reverse proxy every client shares one address: a sign-in that
  // held the network's turn while its form trickled in held every other.
  const { fetch } = doorFor();
  const login = (body: BodyInit) =>
    fetch(
      new Request("http://127.0.0.1:8787/login", { method: "POST", body }),
      from("10.0.0.9"),
    );
  let trickle: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stalled = login(
    new ReadableStream<Uint8Array>({
      start(controller) {
        trickle = controller;
        controller.enqueue(new TextEncoder().encode("ri"));
      },
    }),
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const right = await Promise.race([
    login(TOKEN),
    new Promise<string>((resolve) => timer = setTimeout(resolve, 2000, "")),
  ]);
  clearTimeout(timer);
  trickle!.close();
  assert.equal((await stalled).status, 401);
  assert.ok(right instanceof Response, "the right token waited");
  assert.equal(right.status, 303);
});
