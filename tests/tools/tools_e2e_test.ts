import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type Client,
  connectClient,
  type Msg,
  startToolsHost,
  writeModule,
} from "../support/tools_harness.ts";

const SECRET = "sk_live_e2e_5ecret_9137";

async function fixtureDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox_tools_e2e_" });
  await writeModule(
    dir,
    "add.ts",
    `{
    kind: "tool", name: "add", description: "Add two numbers",
    tags: ["math", "numbers"], idempotent: true,
    input: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    output: { type: "object", properties: { sum: { type: "number" } } },
    run(args, ctx) {
      ctx.progress(10, "start");
      ctx.status("adding");
      ctx.progress(100, "done");
      return { sum: args.a + args.b };
    },
  }`,
  );
  await writeModule(
    dir,
    "read_csv.ts",
    `{
    kind: "tool", name: "read_csv", description: "Read a CSV file and return its rows",
    tags: ["files", "csv"],
    input: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    run: (args) => ({ __skillbox_output: true, data: [["a", "b"]], summary: "1 row from " + args.path, exit_code: 0 }),
  }`,
  );
  await writeModule(
    dir,
    "write_file.ts",
    `{
    kind: "tool", name: "write_file", description: "Write text to a file", tags: ["files"],
    run: () => "written",
  }`,
  );
  await writeModule(
    dir,
    "huge_export.ts",
    `{
    kind: "tool", name: "huge_export", description: "Export a whole database table as CSV",
    tags: ["csv"], defer_loading: true, run: () => "ok",
  }`,
  );
  await writeModule(
    dir,
    "boom.ts",
    `{
    kind: "tool", name: "boom", description: "Always fails",
    run() { throw new Error("Kaboom at step 3"); },
  }`,
  );
  await writeModule(
    dir,
    "slow.ts",
    `{
    kind: "tool", name: "slow", description: "Never finishes on its own",
    run: () => new Promise(() => {}),
  }`,
  );
  await writeModule(
    dir,
    "net.ts",
    `{
    kind: "tool", name: "fetch_evil", description: "Fetch a page",
    permissions: { net: ["evil.example"] }, run: () => "never",
  }`,
  );
  await writeModule(
    dir,
    "danger.ts",
    `{
    kind: "tool", name: "wipe", description: "Delete everything", tags: ["danger"],
    run: () => "wiped",
  }`,
  );
  await Deno.mkdir(join(dir, "vault"));
  await writeModule(
    join(dir, "vault"),
    "toolkit.ts",
    `{
    kind: "toolkit", name: "vault", alias: "Vault", description: "A secret store",
    category: "security", tags: ["secrets"],
    config: {
      type: "object",
      properties: {
        token: { type: "string", secret: true, minLength: 8 },
        label: { type: "string" },
      },
      required: ["token"],
    },
  }`,
  );
  await writeModule(
    join(dir, "vault"),
    "whoami.ts",
    `{
    kind: "tool", name: "whoami", description: "Use the vault token",
    input: { type: "object", properties: { fail: { type: "boolean" } } },
    run(args, ctx) {
      ctx.log("info", "token is " + ctx.config.token);
      ctx.status("label " + ctx.config.label);
      if (args.fail) throw new Error("Rejected token " + ctx.config.token);
      return { token: ctx.config.token, label: ctx.config.label };
    },
  }`,
  );
  return dir;
}

const POLICY = {
  tools: {
    deny: ["tag:danger"],
    tokens: { admin: { allow: ["wipe"] } },
  },
  max_timeout_seconds: 5,
};

function names(msg: Msg): string[] {
  return (msg.tools as { name: string }[]).map((t) => t.name);
}

Deno.test("e2e over WebSocket: tools, toolkits, every error code, and no secret anywhere", async (t) => {
  const dir = await fixtureDir();
  await using h = await startToolsHost({
    dirs: [dir],
    policy: { ...POLICY, permissions: { shared_folders: [dir] } },
    tokens: ["user", "admin"],
  });
  const c: Client = await connectClient(h.wsUrl, "user");
  const admin: Client = await connectClient(h.wsUrl, "admin");
  try {
    await t.step("the registry loaded every fixture without errors", () => {
      assert.deepEqual(h.registry.snapshot.errors, []);
      assert.equal(h.registry.snapshot.tools.size, 9);
    });

    await t.step("tool/list/req list mode, filters and policy", async () => {
      const all = await c.request("tool/list/req", {});
      assert.equal(all.final.type, "tool/list/resp");
      assert.deepEqual(names(all.final), [
        "add",
        "boom",
        "fetch_evil",
        "read_csv",
        "slow",
        "whoami",
        "write_file",
      ]);
      const add = (all.final.tools as Msg[])[0]!;
      assert.deepEqual(Object.keys(add).sort(), [
        "defer_loading",
        "description",
        "idempotent",
        "input_parameters",
        "name",
        "output_parameters",
        "streaming",
        "tags",
        "toolkit",
        "version",
      ]);
      assert.equal((add.output_parameters as Msg[])[0]?.name, "sum");
      const tagged = await c.request("tool/list/req", {
        filter_tags: ["files", "csv"],
      });
      assert.deepEqual(names(tagged.final), ["read_csv"]);
      const kit = await c.request("tool/list/req", { filter_kind: "vault" });
      assert.deepEqual(names(kit.final), ["whoami"]);
      const origin = await c.request("tool/list/req", {
        filter_kind: "builtin",
      });
      assert.deepEqual(names(origin.final), []);
      const adminList = await admin.request("tool/list/req", {});
      assert.ok(names(adminList.final).includes("wipe"));
    });

    await t.step("tool/list/req search mode", async () => {
      const hits = await c.request("tool/list/req", {
        query: "read a csv file",
      });
      assert.equal(names(hits.final)[0], "read_csv");
      assert.ok(!names(hits.final).includes("huge_export"));
      const deferred = await c.request("tool/list/req", {
        query: "export database table",
        include_deferred: true,
      });
      assert.equal(names(deferred.final)[0], "huge_export");
    });

    await t.step("tool/call/req streams events before the result", async () => {
      const a = await c.request("tool/call/req", {
        tool_name: "add",
        arguments: { a: 2, b: 3 },
        streaming: true,
      });
      assert.equal(a.final.type, "tool/call/resp");
      const result = a.final.data as Msg;
      assert.equal(result.success, true);
      assert.deepEqual(result.data, { sum: 5 });
      assert.equal(typeof result.duration_ms, "number");
      assert.deepEqual(
        a.events.map((e) => [e.type, e.kind, e.seq]),
        [
          ["tool/event", "progress", 0],
          ["tool/event", "status", 1],
          ["tool/event", "progress", 2],
        ],
      );
      assert.deepEqual((result.events as Msg[]).map((e) => e.seq), [0, 1, 2]);
      const quiet = await c.request("tool/call/req", {
        tool_name: "add",
        arguments: { a: 1, b: 1 },
      });
      assert.equal(quiet.events.length, 0);
      assert.equal(((quiet.final.data as Msg).events as Msg[]).length, 3);
    });

    await t.step("an Output sets summary and exit_code", async () => {
      const r = await c.request("tool/call/req", {
        tool_name: "read_csv",
        arguments: { path: "x.csv" },
      });
      const data = r.final.data as Msg;
      assert.deepEqual(
        [data.data, data.summary, data.exit_code],
        [[["a", "b"]], "1 row from x.csv", 0],
      );
    });

    await t.step("schema_violation names the field", async () => {
      const r = await c.request("tool/call/req", {
        tool_name: "add",
        arguments: { a: "two" },
      });
      const data = r.final.data as Msg;
      assert.equal(data.success, false);
      assert.equal(data.error_code, "schema_violation");
      assert.match(String(data.error), /"b" is required/);
      assert.match(String(data.error), /"a" must be of type number/);
    });

    await t.step("unknown_tool and tool_denied come as errors", async () => {
      const unknown = await c.request("tool/call/req", {
        tool_name: "nope",
        arguments: {},
      });
      assert.equal(unknown.final.type, "error");
      assert.equal(unknown.final.code, "unknown_tool");
      const denied = await c.request("tool/call/req", {
        tool_name: "wipe",
        arguments: {},
      });
      assert.equal(denied.final.code, "tool_denied");
      assert.match(String(denied.final.message), /rule "tag:danger"/);
      const perm = await c.request("tool/call/req", {
        tool_name: "fetch_evil",
        arguments: {},
      });
      assert.equal(perm.final.code, "tool_denied");
      assert.match(String(perm.final.message), /"net" for "evil\.example"/);
      const allowed = await admin.request("tool/call/req", {
        tool_name: "wipe",
        arguments: {},
      });
      assert.equal((allowed.final.data as Msg).data, "wiped");
    });

    await t.step(
      "a throwing tool gives tool_error with its message and no stack",
      async () => {
        const r = await c.request("tool/call/req", {
          tool_name: "boom",
          arguments: {},
        });
        const data = r.final.data as Msg;
        assert.equal(data.error_code, "tool_error");
        assert.match(String(data.error), /Kaboom at step 3/);
        assert.doesNotMatch(String(data.error), /\n\s+at |runtime\/|file:\/\//);
      },
    );

    await t.step("timeout is capped by the policy", async () => {
      const r = await c.request("tool/call/req", {
        tool_name: "slow",
        arguments: {},
        timeout: 1,
      });
      const data = r.final.data as Msg;
      assert.equal(data.error_code, "timeout");
      // The call's own 1 s (what was left of it when the process got the
      // call), not the policy's 5 s.
      const ms = Number(
        /Timed out after (\d+) ms/.exec(String(data.error))?.[1],
      );
      assert.ok(ms > 0 && ms <= 1000, String(data.error));
    });

    await t.step(
      "toolkits: list, configure errors, per-session configured",
      async () => {
        const list = await c.request("toolkit/list/req", {});
        assert.equal(list.final.type, "toolkit/list/resp");
        const [vault] = list.final.toolkits as Msg[];
        assert.equal(vault?.name, "vault");
        assert.deepEqual(vault?.tools, ["whoami"]);
        assert.equal(vault?.configured, false);
        assert.equal(
          ((vault?.schema as Msg).properties as Record<string, Msg>).token
            ?.secret,
          true,
        );
        const byCategory = await c.request("toolkit/list/req", {
          filter_kind: "security",
          filter_tags: ["secrets"],
        });
        assert.equal((byCategory.final.toolkits as Msg[]).length, 1);

        const before = await c.request("tool/call/req", {
          tool_name: "whoami",
          arguments: {},
        });
        assert.equal((before.final.data as Msg).error_code, "tool_error");
        assert.match(
          String((before.final.data as Msg).error),
          /not configured/,
        );

        const empty = await c.request("toolkit/configure/req", {
          toolkit_name: "",
          config: {},
        });
        assert.equal(empty.final.type, "toolkit/configure/resp");
        assert.equal(empty.final.status, "error");
        const unknown = await c.request("toolkit/configure/req", {
          toolkit_name: "nope",
        });
        assert.equal(unknown.final.status, "error");
        const bad = await c.request("toolkit/configure/req", {
          toolkit_name: "vault",
          config: { token: "short", label: SECRET },
        });
        assert.equal(bad.final.status, "error");
        assert.match(
          String(bad.final.message),
          /"token" is too short/,
          JSON.stringify(bad.final),
        );
        const ok = await c.request("toolkit/configure/req", {
          toolkit_name: "vault",
          config: { token: SECRET, label: "prod" },
        });
        assert.deepEqual([ok.final.status, ok.final.message], ["ok", null]);
        const after = await c.request("toolkit/list/req", {});
        assert.equal((after.final.toolkits as Msg[])[0]?.configured, true);
        const other = await admin.request("toolkit/list/req", {});
        assert.equal((other.final.toolkits as Msg[])[0]?.configured, false);
      },
    );

    await t.step(
      "the secret reaches the tool, and nothing it sends back shows it",
      async () => {
        const r = await c.request("tool/call/req", {
          tool_name: "whoami",
          arguments: {},
          streaming: true,
        });
        const data = r.final.data as Msg;
        assert.equal(data.success, true);
        assert.deepEqual(data.data, { token: "[redacted]", label: "prod" });
        assert.ok(
          r.events.some((e) =>
            (e.data as Msg).message === "token is [redacted]"
          ),
        );
        const failed = await c.request("tool/call/req", {
          tool_name: "whoami",
          arguments: { fail: true },
        });
        assert.equal(
          (failed.final.data as Msg).error,
          "Rejected token [redacted]",
        );
      },
    );

    await t.step("no message, event or log line holds the secret", () => {
      const everything = JSON.stringify([c.received, admin.received, h.logs]);
      assert.ok(c.received.length > 20);
      assert.ok(!everything.includes(SECRET), "the secret leaked");
    });
  } finally {
    await c.close();
    await admin.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("e2e: host config preconfigures a toolkit for every session", async () => {
  const dir = await fixtureDir();
  await using h = await startToolsHost({
    dirs: [dir],
    policy: { permissions: { shared_folders: [dir] } },
    toolkits: { vault: { token: SECRET, label: "shared" } },
  });
  const c = await connectClient(h.wsUrl);
  try {
    const list = await c.request("toolkit/list/req", {});
    assert.equal((list.final.toolkits as Msg[])[0]?.configured, true);
    const r = await c.request("tool/call/req", {
      tool_name: "whoami",
      arguments: {},
    });
    assert.deepEqual((r.final.data as Msg).data, {
      token: "[redacted]",
      label: "shared",
    });
    assert.ok(!JSON.stringify([c.received, h.logs]).includes(SECRET));
  } finally {
    await c.close();
    await Deno.remove(dir, { recursive: true });
  }
});
