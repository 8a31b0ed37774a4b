/**
 * A compromised imported MCP server against the host's imported servers:
 * listings that page on for ever or grow without end, list_changed storms,
 * and tool names that reach into another server's namespace. Each server
 * is a real process (`_hostile_mcp_server.ts`), talked to over stdio.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type {
  ImportedServers,
  McpServerSpec,
} from "../../runtime/mcp/imported_servers.ts";
import { EgressBroker } from "../../runtime/egress/broker.ts";
import { validateValue } from "../../runtime/schema/validator.ts";
import { settlesWithin } from "../../runtime/deadline.ts";
import { withImported } from "../support/raw_mcp_server.ts";

const SERVER = fileURLToPath(
  new URL("./_hostile_mcp_server.ts", import.meta.url),
);

// Tools and name go in its arguments: its env values are secrets, and
// scrubbed from all it says.
function hostile(
  env: Record<string, string>,
  args: string[] = [],
): McpServerSpec {
  return {
    command: Deno.execPath(),
    args: ["run", "--allow-env", "--allow-write", SERVER, ...args],
    env,
    // Fast enough that a stuck listing shows, slow enough for a load.
    startTimeoutMs: 30_000,
  };
}

async function withServers(
  servers: Record<string, McpServerSpec>,
  fn: (
    s: ImportedServers,
    changes: () => number,
    log: readonly string[],
  ) => Promise<void>,
): Promise<void> {
  let changes = 0;
  const log: string[] = [];
  await withImported({
    servers,
    onChange: () => {
      changes++;
    },
    log: (line) => log.push(line),
  }, (imported) => fn(imported, () => changes, log));
}

// The host says where it stopped reading a listing, in its log and in the
// toolkit's description (what the console and /api list).
function assertCutSaid(
  servers: ImportedServers,
  name: string,
  log: readonly string[],
): void {
  const said = new RegExp(
    `MCP server "${name}": its tool listing goes past 10,000 tools, 100 pages or 16 MiB of JSON: the rest was not read`,
  );
  assert.equal(log.filter((l) => said.test(l)).length, 1, log.join("\n"));
  const [kit] = toolkit(servers, name);
  assert.match(String(kit!.fields.description), /the rest was not read/);
}

function toolkit(servers: ImportedServers, name: string) {
  const module = servers.modules().find((m) =>
    m.module.path === `/mcp:/${name}`
  )!;
  return module.module.definitions;
}

// The server's toolkit is listed available (tagged "mcp" alone).
function assertAvailable(
  kit: ReturnType<typeof toolkit>[number] | undefined,
): void {
  assert.deepEqual(kit!.fields.tags, ["mcp"], String(kit!.fields.description));
}

async function requests(log: string, method: string): Promise<number> {
  const text = await Deno.readTextFile(log).catch(() => "");
  return text.split("\n").filter((l) => l === method).length;
}

Deno.test("a server paging empty tool lists for ever does not hold its start", async () => {
  const log = await Deno.makeTempFile();
  await withServers({
    endless: hostile({ HOSTILE_MODE: "endless-tools", HOSTILE_LOG: log }),
  }, async (servers, _changes, lines) => {
    // Before: the host read every page; the server gives up after 5000
    // and exits, and its start failed.
    await servers.start();
    const [kit] = toolkit(servers, "endless");
    assertAvailable(kit);
    const pages = await requests(log, "tools/list");
    assert.ok(pages <= 100, `${pages} tools/list pages read`);
    // Before: it stopped without a word to the operator.
    assertCutSaid(servers, "endless", lines);
  });
  await Deno.remove(log);
});

Deno.test("a server paging empty skill lists for ever does not hold its start", async () => {
  const log = await Deno.makeTempFile();
  await withServers({
    endless: hostile({ HOSTILE_MODE: "endless-skills", HOSTILE_LOG: log }),
  }, async (servers) => {
    await servers.start();
    const [kit] = toolkit(servers, "endless");
    assertAvailable(kit);
    const pages = await requests(log, "skills/list");
    assert.ok(pages <= 100, `${pages} skills/list pages read`);
    // Before: it stopped without a word to the operator.
    assert.match(
      String(kit!.fields.description),
      /refused: its skill listing goes past 1,000 skills or 100 pages: the rest was not read/,
    );
  });
  await Deno.remove(log);
});

Deno.test("a server's tool listing is kept to 16 MiB however many pages it serves", async () => {
  const log = await Deno.makeTempFile();
  await withServers({
    // 1 MiB a page; before, the host read all 200 (200 MiB) and failed
    // when the server gave up.
    fat: hostile({
      HOSTILE_MODE: "fat-tools",
      HOSTILE_PAGES: "200",
      HOSTILE_LOG: log,
    }),
  }, async (servers, _changes, lines) => {
    await servers.start();
    const [kit, ...tools] = toolkit(servers, "fat");
    assertAvailable(kit);
    const chars = tools.reduce(
      (n, t) => n + String(t.fields.description).length,
      0,
    );
    assert.ok(chars <= 16 << 20, `${chars} characters of descriptions kept`);
    assert.ok(tools.length >= 1, "what fits is kept");
    const pages = await requests(log, "tools/list");
    assert.ok(pages <= 17, `${pages} tools/list pages read`);
    assertCutSaid(servers, "fat", lines);
  });
  await Deno.remove(log);
});

Deno.test("a storm of tools/list_changed costs one listing in flight and one after it", async () => {
  await withServers({
    stormy: hostile({ HOSTILE_STORM: "2000" }, ["storm,count"]),
  }, async (servers, changes) => {
    await servers.start();
    const before = changes();
    const call = { timeoutMs: 30_000, onEvent: () => {} };
    const storm = await servers.call("stormy", "storm", {}, call);
    assert.equal(storm.ok, true);
    // The storm came before its call's answer, and every listing the host
    // asked for in answer to it was written to the server before this
    // call: the count is of all of them (before: 2001).
    const count = await servers.call("stormy", "count", {}, call);
    assert.ok(count.ok);
    assert.ok(Number(count.value) <= 3, `${count.value} tools/list read`);
    assert.ok(changes() - before <= 2, `${changes() - before} reloads`);
  });
});

Deno.test("a server's tool names do not reach into another server's namespace", async () => {
  // `a` + `__` + `b__c` is `a__b` + `__` + `c`, and `a` + `__` + `_x` is
  // `a_` + `__` + `x`: server names may hold `_`, so the compromised `a`
  // could list names that are the other servers' tools.
  await withServers({
    a: hostile({}, ["b__c,_x,own", "a"]),
    "a__b": hostile({}, ["c", "a__b"]),
    "a_": hostile({}, ["x", "a_"]),
  }, async (servers) => {
    await servers.start();
    const owners = new Map<string, string[]>();
    for (const { module } of servers.modules()) {
      for (const d of module.definitions) {
        if (d.kind !== "tool") continue;
        owners.set(d.name, [...owners.get(d.name) ?? [], module.path]);
      }
    }
    assert.deepEqual(Object.fromEntries(owners), {
      "a__own": ["/mcp:/a"],
      "a__b__c": ["/mcp:/a__b"],
      "a___x": ["/mcp:/a_"],
    });
    const [kit] = toolkit(servers, "a");
    assert.match(
      String(kit!.fields.description),
      /tool "b__c" left out: its name "a__b__c" is the MCP server "a__b"'s/,
    );
  });
});

// An HTTP MCP server on loopback whose answers stream `total` bytes, 1 MiB
// at a time: `json` one JSON body, `sse` one event that never ends. Says
// how many bytes it sent before the host stopped reading.
function fatHttpServer(kind: "json" | "sse", total: number) {
  let sent = 0;
  const done = Promise.withResolvers<void>();
  const chunk = new TextEncoder().encode("x".repeat(1 << 20));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      if (req.method !== "POST") return new Response(null, { status: 405 });
      const head = kind === "json"
        ? '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18",' +
          '"capabilities":{},"serverInfo":{"name":"fat","version":"1"},' +
          '"instructions":"'
        : 'event: message\ndata: {"jsonrpc":"2.0","id":0,"result":{"x":"';
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(head));
        },
        pull(c) {
          if (sent >= total) {
            c.enqueue(new TextEncoder().encode(kind === "json" ? '"}}' : ""));
            c.close();
            done.resolve();
            return;
          }
          sent += chunk.length;
          c.enqueue(chunk);
        },
        cancel() {
          done.resolve();
        },
      });
      return new Response(body, {
        headers: {
          "content-type": kind === "json"
            ? "application/json"
            : "text/event-stream",
        },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    sent: () => sent,
    done: done.promise,
    close: () => server.shutdown(),
  };
}

for (const kind of ["json", "sse"] as const) {
  Deno.test(`an HTTP server's ${kind} answer is read to 16 MiB, no further`, async () => {
    const fat = fatHttpServer(kind, 64 << 20);
    try {
      await withImported({
        servers: { fat: { url: fat.url, startTimeoutMs: 3_000 } },
        egress: new EgressBroker({ privateHosts: ["127.0.0.1"] }),
      }, async (servers) => {
        await servers.start();
        await fat.done;
        // Before: all 64 MiB were taken in, to be parsed as one message.
        // Now 16 MiB, and what the loopback socket's buffers took ahead.
        assert.ok(fat.sent() <= 32 << 20, `${fat.sent()} bytes read`);
        const [kit] = toolkit(servers, "fat");
        assert.deepEqual(kit!.fields.tags, ["mcp", "unavailable"]);
      });
    } finally {
      await fat.close();
    }
  });
}

Deno.test("a server's skill URIs with dot segments, raw or encoded, are refused", async () => {
  await withServers({
    odd: hostile({ HOSTILE_MODE: "odd-skills" }),
  }, async (servers) => {
    await servers.start();
    // Before: all three were verified and served again to MCP clients
    // (`mcp-skill://odd/../../evil/SKILL.md`, a file `%2e%2e/%2e%2e/x.md`
    // listed in a directory named "..").
    assert.deepEqual(servers.remoteSkills().map((s) => s.name), ["odd__fine"]);
    const refused = toolkit(servers, "odd").filter((d) =>
      d.kind === "skill" &&
      (d.fields.metadata as Record<string, unknown>).refused !== undefined
    ).map((d) => d.name).sort();
    assert.deepEqual(refused, ["odd__dots", "odd__evil"]);
  });
});

Deno.test("a server's result is held to max_result_bytes as a sandbox tool's is", async () => {
  await withServers({
    fat: hostile({}, ["big,many,big-error"]),
  }, async (servers) => {
    await servers.start();
    const call = { timeoutMs: 30_000, onEvent: () => {} };
    // Before: 4 MiB and 200,000 items were passed on whole (a sandbox
    // tool's result is cut to 1 MiB and marked truncated).
    for (const tool of ["big", "many"]) {
      const out = await servers.call("fat", tool, {}, call);
      assert.ok(out.ok, tool);
      // The sandbox's cut: a string to 1 MiB characters, anything else to
      // the first 1 MiB characters of its JSON.
      const size = typeof out.value === "string"
        ? out.value.length
        : JSON.stringify(out.value).length;
      assert.ok(size <= 1 << 20, `${tool}: ${size} characters`);
      assert.equal(out.truncated, true, tool);
    }
    const failed = await servers.call("fat", "big-error", {}, call);
    assert.ok(!failed.ok);
    assert.ok(failed.message.length <= 4096, `${failed.message.length}`);
  });
});

Deno.test("a server's schemas bring no regular expression for the host to run", async () => {
  await withServers({
    re: hostile({}, ["regex"]),
  }, async (servers) => {
    await servers.start();
    const [, tool] = toolkit(servers, "re");
    // Before: the host's validator ran `^(a+)+$` on each argument (and
    // property name): "a" × 30 and "!" held the host's event loop for
    // seconds, every few more characters doubling it.
    const schemas = JSON.stringify([tool!.fields.input, tool!.fields.output]);
    assert.doesNotMatch(schemas, /"pattern(Properties)?":/);
    const hostile = "a".repeat(40) + "!";
    const input = tool!.fields.input as Record<string, unknown>;
    // Still an object schema of its properties; the server checks the rest.
    assert.deepEqual(validateValue(input, { s: hostile, [hostile]: "x" }), {
      valid: true,
    });
    assert.equal(validateValue(input, { s: 1 }).valid, false);
  });
});

Deno.test("a server's resource links count against the result bound", async () => {
  await withServers({
    links: hostile({}, ["links"]),
  }, async (servers) => {
    await servers.start();
    let events = 0;
    let bytes = 0;
    const out = await servers.call("links", "links", {}, {
      timeoutMs: 30_000,
      onEvent: (_kind, data) => {
        events++;
        bytes += JSON.stringify(data).length;
      },
    });
    assert.ok(out.ok);
    // Before: a link has no base64, so it counted nothing: 100,000
    // artifact events went out.
    assert.ok(bytes <= 1 << 20, `${events} artifact events, ${bytes} bytes`);
    assert.equal(out.truncated, true);
  });
});

Deno.test("a server's error reading a skill file is scrubbed of its secrets", async () => {
  const secret = "skill-read-secret-0001";
  await withServers({
    odd: hostile({ HOSTILE_MODE: "odd-skills", HOSTILE_SECRET: secret }),
  }, async (servers) => {
    await servers.start();
    const [fine] = servers.remoteSkills();
    assert.equal(fine?.name, "odd__fine");
    // Before: the server's own words went on to the MCP client (and to
    // the agent loop's read_skill_file) with the secret in them.
    const error = await fine!.read("skill://fine/a%20b.md").then(
      () => assert.fail("the read should fail"),
      (e: Error) => e,
    );
    assert.match(error.message, /Cannot read/);
    assert.ok(!error.message.includes(secret), error.message);
  });
});

Deno.test("a server's skills are kept to 16 MiB of SKILL.md in all", async () => {
  await withServers({
    fat: hostile({ HOSTILE_MODE: "fat-skills" }),
  }, async (servers) => {
    await servers.start();
    const skills = toolkit(servers, "fat").filter((d) => d.kind === "skill");
    const kept = skills.filter((d) =>
      (d.fields.metadata as Record<string, unknown>).refused === undefined
    );
    const chars = kept.reduce(
      (n, d) => n + String(d.fields.instructions).length,
      0,
    );
    // Before: all 100 (20 MiB) were kept, and listed again at each
    // resources/list_changed; 1000 of 256 KiB each would be 256 MiB.
    assert.ok(chars <= 16 << 20, `${kept.length} skills, ${chars} characters`);
    assert.ok(kept.length >= 1);
    assert.match(
      String(
        (skills.at(-1)!.fields.metadata as Record<string, unknown>).refused,
      ),
      /over the 16777216 bytes of SKILL\.md a server may serve/,
    );
  });
});

Deno.test("a stdio server's message is bounded at 16 MiB, and one over it stops the server saying so", async () => {
  await withServers({
    big: hostile({}, ["huge,over,count"]),
  }, async (servers) => {
    await servers.start();
    const call = { timeoutMs: 30_000, onEvent: () => {} };
    // Before: the SDK's own buffer stopped at 10 MiB, threw in the read
    // loop, and reading stopped: "Connection closed", and the server was
    // left running unread.
    const huge = await servers.call("big", "huge", {}, call);
    assert.ok(huge.ok, huge.ok ? "" : huge.message);
    assert.equal(huge.truncated, true);
    const over = await servers.call("big", "over", {}, call);
    assert.ok(!over.ok);
    assert.match(over.message, /over 16777216 bytes/);
  });
});

Deno.test("a list_changed that changes nothing reloads nothing", async () => {
  await withServers({
    stormy: hostile({ HOSTILE_STORM: "50" }, ["storm,count"]),
  }, async (servers, changes) => {
    await servers.start();
    const before = changes();
    const call = { timeoutMs: 30_000, onEvent: () => {} };
    for (let i = 0; i < 3; i++) {
      assert.ok((await servers.call("stormy", "storm", {}, call)).ok);
    }
    // Each count is answered after every listing asked for before it:
    // twice, so the listing owed after the first is answered too.
    await servers.call("stormy", "count", {}, call);
    await servers.call("stormy", "count", {}, call);
    // Before: each listing reloaded the registry (a scan of every skills
    // folder) though the tools were the same: 2 per storm.
    assert.equal(changes() - before, 0);
  });
});

// An HTTP MCP server on loopback that answers its start, then trickles a
// tools/call answer for ever: a byte of an SSE comment every 50 ms. The MCP
// SDK never aborts a call's POST when the call times out, so only the
// request's own clock ends it. Says when the host let the connection go.
function tricklingHttpServer() {
  const released = Promise.withResolvers<void>();
  const json = (id: unknown, result: unknown) =>
    Response.json({ jsonrpc: "2.0", id, result });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      if (req.method !== "POST") return new Response(null, { status: 405 });
      const message = await req.json();
      if (message.id === undefined) return new Response(null, { status: 202 });
      if (message.method === "initialize") {
        return json(message.id, {
          protocolVersion: message.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "slow", version: "1" },
        });
      }
      if (message.method === "tools/list") {
        return json(message.id, {
          tools: [{ name: "wait", inputSchema: { type: "object" } }],
        });
      }
      let timer: ReturnType<typeof setInterval> | undefined;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          timer = setInterval(() => c.enqueue(new Uint8Array([58])), 50);
        },
        cancel() {
          clearInterval(timer);
          released.resolve();
        },
      });
      return new Response(body, {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    released: released.promise,
    close: () => server.shutdown(),
  };
}

Deno.test("a call's request to an HTTP server that trickles for ever ends on its clock", async () => {
  const slow = tricklingHttpServer();
  try {
    await withImported({
      servers: { slow: { url: slow.url, startTimeoutMs: 10_000 } },
      egress: new EgressBroker({ privateHosts: ["127.0.0.1"] }),
      requestTimeoutMs: 1_000,
    }, async (servers) => {
      await servers.start();
      const out = await servers.call("slow", "wait", {}, {
        timeoutMs: 200,
        onEvent: () => {},
      });
      assert.equal(out.ok, false);
      // Before: the POST stayed open, one host connection for each such
      // call, until the server chose to stop (checkedFetch had no clock).
      const ended = await settlesWithin(slow.released, 10_000);
      assert.ok(ended, "the call's request was still open after 10 s");
    });
  } finally {
    await slow.close();
  }
});
