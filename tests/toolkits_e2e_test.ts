/**
 * The shipped toolkits run for real: loaded by the registry, configured per
 * session, granted by the policy, and executed in sandbox processes — so
 * what confines them here is the sandbox's grant, not only their own checks.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost, type Host } from "../runtime/host.ts";
import type { ToolOutcome } from "../protocol/tool.ts";

interface Fixture {
  host: Host;
  data: string;
  outside: string;
  port: number;
  close(): Promise<void>;
}

async function start(): Promise<Fixture> {
  const data = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  await Deno.writeTextFile(join(data, "inside.txt"), "inside\n");
  await Deno.writeTextFile(join(outside, "secret.txt"), "outside secret\n");
  await Deno.symlink(join(outside, "secret.txt"), join(data, "escape.txt"));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => new Response(`hello ${new URL(req.url).pathname}`),
  );
  const port = server.addr.port;
  const host = createHost({
    config: {
      skills: [],
      sandbox: {
        cacheDir: null,
        memoryMb: 256,
        maxIdleProcesses: 8,
        spareWorkers: 1,
        maxResultBytes: 1 << 20,
      },
      // The operator lets the broker reach the test's loopback server.
      egress: {
        allowPrivateHosts: ["127.0.0.1"],
        secrets: [],
        maxResponseBytes: 1 << 20,
        timeoutSeconds: 10,
      },
      policy: {
        permissions: {
          read: [data],
          write: [data],
          net: [`127.0.0.1:${port}`],
          run: ["echo"],
        },
      },
    },
  });
  await host.ready;
  return {
    host,
    data,
    outside,
    port,
    async close() {
      await host.close({ timeoutSeconds: 1 });
      await server.shutdown();
      await Deno.remove(data, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    },
  };
}

async function configure(host: Host, name: string, config: object) {
  const resp = await host.request({
    type: "toolkit/configure/req",
    toolkit_name: name,
    config,
  });
  assert.equal(resp.status, "ok", String(resp.message));
}

function ok(result: ToolOutcome): Record<string, unknown> {
  assert.equal(result.success, true, String(result.error));
  return result.data as Record<string, unknown>;
}

Deno.test("shipped toolkits run in the sandbox with exactly their configured grant", async (t) => {
  const f = await start();
  try {
    await t.step(
      "filesystem reads inside root and nothing outside",
      async () => {
        await configure(f.host, "filesystem", { root: f.data, writable: true });
        const read = ok(
          await f.host.callTool("read_file", { path: "inside.txt" }),
        );
        assert.equal(read.content, "inside\n");
        const escape = await f.host.callTool("read_file", {
          path: "escape.txt",
        });
        assert.equal(escape.success, false);
        assert.doesNotMatch(JSON.stringify(escape), /outside secret/);
        const absolute = await f.host.callTool("read_file", {
          path: join(f.outside, "secret.txt"),
        });
        assert.equal(absolute.success, false);
        assert.doesNotMatch(JSON.stringify(absolute), /outside secret/);
        ok(
          await f.host.callTool("write_file", {
            path: "new.txt",
            content: "written",
          }),
        );
        assert.equal(
          await Deno.readTextFile(join(f.data, "new.txt")),
          "written",
        );
      },
    );

    await t.step("filesystem rooted beyond the policy is denied", async () => {
      await configure(f.host, "filesystem", { root: f.outside });
      await assert.rejects(
        () => f.host.callTool("read_file", { path: "secret.txt" }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "tool_denied");
          assert.match(error.message, /read/);
          return true;
        },
      );
    });

    await t.step("shell runs allowed commands and refuses others", async () => {
      await configure(f.host, "shell", { allowed_commands: ["echo"] });
      const echo = await f.host.callTool("run_command", {
        command: "echo",
        args: ["hi", "there"],
      });
      assert.equal(ok(echo).stdout, "hi there\n");
      assert.equal(echo.exitCode, 0);
      const refused = await f.host.callTool("run_command", {
        command: "cat",
        args: ["/etc/passwd"],
      });
      assert.equal(refused.success, false);
      assert.match(String(refused.error), /cat/);
    });

    await t.step(
      "shell allowed a command beyond the policy is denied",
      async () => {
        await configure(f.host, "shell", { allowed_commands: ["cat"] });
        await assert.rejects(
          () => f.host.callTool("run_command", { command: "cat" }),
          (error: Error & { code?: string }) => error.code === "tool_denied",
        );
      },
    );

    await t.step("http reaches an allowed local server", async () => {
      await configure(f.host, "http", {
        allowed_hosts: [`127.0.0.1:${f.port}`],
      });
      const got = await f.host.callTool("http_request", {
        url: `http://127.0.0.1:${f.port}/ping`,
      });
      const body = ok(got);
      assert.equal(body.status, 200);
      assert.equal(body.body, "hello /ping");
    });

    await t.step("code evaluates with no permissions at all", async () => {
      const sum = ok(
        await f.host.callTool("eval_typescript", {
          code: "const n: number = 40;\nconsole.log('adding');\nn + 2",
        }),
      );
      assert.equal(sum.value, 42);
      assert.deepEqual(sum.console, [{ level: "log", text: "adding" }]);
      for (
        const code of [
          `await Deno.readTextFile(${
            JSON.stringify(join(f.data, "inside.txt"))
          })`,
          "await Deno.readTextFile('skills/code/toolkit.ts')",
          "Deno.env.get('HOME')",
        ]
      ) {
        const denied = ok(await f.host.callTool("eval_typescript", { code }));
        assert.match(String(denied.error), /NotCapable/, code);
      }
    });
  } finally {
    await f.close();
  }
});
