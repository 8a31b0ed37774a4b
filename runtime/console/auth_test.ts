import assert from "node:assert/strict";
import { createConsoleAuth } from "./auth.ts";
import { Hono } from "hono";

Deno.test("labelOf() names the first configured token a value is, and no other", () => {
  const auth = createConsoleAuth(["alpha", "alphabet", "béta", "alpha"]);
  assert.equal(auth.labelOf("alpha"), "token 1");
  assert.equal(auth.labelOf("alphabet"), "token 2");
  assert.equal(auth.labelOf("béta"), "token 3");
  // A prefix, an extension, a letter off, another encoding of é: no token.
  for (const wrong of ["alph", "alphab", "alphaa", "beta", "be\u0301ta", ""]) {
    assert.equal(auth.labelOf(wrong), null, wrong);
  }
  assert.equal(auth.required, true);
  assert.equal(createConsoleAuth([]).required, false);
});

// A token holds at most 32 console sessions: its 33rd sign-in ends its
// oldest, and never another token's (a flood of one token's sign-ins
// cannot sign the operator out). Sign-out and expiry end a session.
Deno.test("a token's 33rd console session ends its oldest, and no other token's", async () => {
  const auth = createConsoleAuth(["alpha-token", "beta-token"]);
  const app = new Hono();
  app.post("/login/:label", (c) => {
    auth.login(c, c.req.param("label"));
    return c.body(null, 204);
  });
  app.post("/logout", (c) => {
    auth.logout(c);
    return c.body(null, 204);
  });
  app.get("/who", (c) => c.text(String(auth.check(c))));
  const login = async (label: string) => {
    const res = await app.request(`/login/${label}`, { method: "POST" });
    return res.headers.get("set-cookie")!.split(";")[0]!;
  };
  const who = async (cookie: string) =>
    await (await app.request("/who", { headers: { cookie } })).text();
  const admin = await login("token 1");
  const mine: string[] = [];
  for (let i = 0; i < 33; i++) mine.push(await login("token 2"));
  assert.equal(await who(mine[0]!), "null");
  assert.equal(await who(mine[1]!), "token 2");
  assert.equal(await who(mine[32]!), "token 2");
  assert.equal(await who(admin), "token 1");
  // The next sign-in ends the then oldest, not the one just checked.
  mine.push(await login("token 2"));
  assert.equal(await who(mine[1]!), "null");
  assert.equal(await who(mine[2]!), "token 2");
  await app.request("/logout", {
    method: "POST",
    headers: { cookie: mine[2]! },
  });
  assert.equal(await who(mine[2]!), "null");
  assert.equal(await who(admin), "token 1");
  // Past its 12 hours a session is over, and stays over.
  const realNow = Date.now;
  try {
    Date.now = () => realNow() + 13 * 3600_000;
    assert.equal(await who(admin), "null");
  } finally {
    Date.now = realNow;
  }
  assert.equal(await who(admin), "null");
  assert.equal(await who(mine[3]!), "token 2");
});
