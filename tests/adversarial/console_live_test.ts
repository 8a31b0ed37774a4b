/**
 * `/api/live` against a token that opens feed after feed and never reads
 * them, on a real host: every open feed is a listener every call of every
 * client runs through, so one token holds at most 8; its ninth ends its
 * own oldest (a reloaded page is never locked out), while another token's
 * feed, opened first, keeps hearing calls.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";
import { connect } from "../../client/mod.ts";

const T = "live-token-t-8d2c6a1e9f3b7c50";
const ADMIN = "live-token-admin-4b9e1c7a2d5f";
const PER_TOKEN = 8;

Deno.test("a token holds at most 8 live feeds, its oldest ended for a new one; another token's feed is kept", async () => {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_live_" });
  const skills = join(dir, "skills");
  await Deno.mkdir(skills);
  await Deno.writeTextFile(
    join(skills, "add.ts"),
    `export default { kind: "tool", name: "add", description: "Add two numbers",
  input: { type: "object" }, run(args) { return { sum: args.a + args.b }; } };`,
  );
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [skills],
      builtinSkills: false,
      tokens: [T, ADMIN],
      sandbox: { ...base.sandbox, cacheDir: null },
      console: { adminTokens: [ADMIN] },
      store: { path: join(dir, "runs.db"), maxRuns: 1000, maxAgeDays: 1 },
    },
  });
  await host.ready;
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  const feeds: ReadableStreamDefaultReader<string>[] = [];
  // Opens a feed and reads up to its `hello`, so the host has it.
  const open = async (token: string) => {
    const res = await fetch(url + "/api/live", {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    feeds.push(reader);
    let text = "";
    while (!text.includes("event: hello")) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the feed ended before its hello");
      text += value;
    }
    return reader;
  };
  // Reads until a run starts, or the feed ends.
  const next = async (reader: ReadableStreamDefaultReader<string>) => {
    let text = "";
    while (!text.includes("event: started")) {
      const { value, done } = await reader.read();
      if (done) return "ended";
      text += value;
    }
    return "started";
  };
  const client = await connect(url.replace("http", "ws") + "/a2e", {
    token: T,
  });
  try {
    const admin = await open(ADMIN);
    const mine = [];
    for (let i = 0; i <= PER_TOKEN; i++) mine.push(await open(T));
    const call = await client.tools.call("add", { a: 1, b: 2 });
    assert.equal(call.success, true);
    assert.equal(await next(mine[0]!), "ended", "the oldest feed was kept");
    for (const reader of mine.slice(1)) {
      assert.equal(await next(reader), "started");
    }
    assert.equal(await next(admin), "started");
  } finally {
    await client.close();
    await Promise.all(feeds.map((r) => r.cancel().catch(() => {})));
    await host.close({ timeoutSeconds: 1 });
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
