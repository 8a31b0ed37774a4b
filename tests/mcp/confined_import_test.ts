/**
 * Imported stdio MCP servers run inside the sandbox's OS confinement: a
 * server that tries to read a host file outside its folder, see a host
 * process, connect to a loopback server or write its read-only folder is
 * denied each, and still lists and calls (with progress) normally. The
 * same probe unconfined succeeds, so the denials are the confinement's.
 * `"required"` without bubblewrap: the server does not start, listed
 * unavailable with the reason.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import {
  type ConfinementStatus,
  detectConfinement,
} from "../../runtime/confine/confine.ts";
import { createImportedServers } from "../../runtime/mcp/imported.ts";
import type { McpProcessSpec } from "../../runtime/mcp/server_process.ts";

const SERVER = fileURLToPath(new URL("./_probe_server.ts", import.meta.url));
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const status = await detectConfinement("auto");
const ignore = !status.active;
// Without working bubblewrap (status.reason says why) the confined tests are
// ignored; the "required" test below still runs.

const probeServer = (
  cwd: string,
  extra: Partial<McpProcessSpec> = {},
): McpProcessSpec => ({
  command: Deno.execPath(),
  args: ["run", "-A", "--cached-only", SERVER],
  cwd,
  ...extra,
});

async function withProbe(
  spec: McpProcessSpec,
  confinement: () => Promise<ConfinementStatus>,
  body: (
    servers: ReturnType<typeof createImportedServers>,
    targets: Record<string, unknown>,
  ) => Promise<void>,
) {
  const outside = await Deno.makeTempDir({ dir: REPO + "/.." });
  const secret = join(outside, "secret.txt");
  await Deno.writeTextFile(secret, "host secret");
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  listener.accept().then((c) => c.close()).catch(() => {});
  const servers = createImportedServers({
    servers: { probe: spec },
    confinement,
    startTimeoutMs: 20_000,
  });
  try {
    await servers.start();
    await body(servers, {
      file: secret,
      pid: Deno.pid,
      port: listener.addr.port,
      write: join(spec.cwd ?? outside, `planted-${crypto.randomUUID()}`),
    });
  } finally {
    await servers.close();
    listener.close();
    await Deno.remove(outside, { recursive: true });
  }
}

const call = (
  servers: ReturnType<typeof createImportedServers>,
  tool: string,
  args: unknown,
  events: unknown[] = [],
) =>
  servers.call("probe", tool, args, {
    timeoutMs: 20_000,
    onEvent: (kind, data) => events.push({ kind, data }),
  });

Deno.test({
  name:
    "a confined stdio MCP server is denied host files, processes, loopback and writes, and still works",
  ignore,
  async fn() {
    await withProbe(
      probeServer(REPO),
      () => Promise.resolve(status),
      async (servers, targets) => {
        const kit = servers.modules()[0]!.module.definitions;
        assert.deepEqual(kit.map((d) => d.name), [
          "probe",
          "probe__add",
          "probe__probe",
        ]);
        const events: unknown[] = [];
        const added = await call(servers, "add", { a: 2, b: 3 }, events);
        assert.deepEqual(added, {
          ok: true,
          value: { sum: 5 },
          truncated: false,
        });
        assert.deepEqual(events, [{
          kind: "progress",
          data: { pct: 100, message: "half" },
        }]);
        const probed = await call(servers, "probe", targets);
        assert.equal(probed.ok, true);
        const report = (probed as { value: Record<string, string> }).value;
        assert.match(report.read!, /^denied: NotFound/);
        assert.match(report.process!, /^denied: NotFound/);
        assert.match(report.connect!, /^denied: /);
        assert.match(report.write!, /^denied: /);
        await assert.rejects(Deno.stat(String(targets.write)));
      },
    );
  },
});

Deno.test({
  name:
    "the same probe unconfined reaches the host (the denials above are the confinement's)",
  ignore,
  async fn() {
    const off = () => detectConfinement("off");
    await withProbe(probeServer(REPO), off, async (servers, targets) => {
      const probed = await call(servers, "probe", targets);
      assert.deepEqual((probed as { value: unknown }).value, {
        read: "ok",
        process: "ok",
        connect: "ok",
        write: "ok",
      });
      await Deno.remove(String(targets.write));
    });
  },
});

Deno.test({
  name:
    "a confined server writes its folder only when the config says writable",
  ignore,
  async fn() {
    const folder = await Deno.makeTempDir({ dir: REPO + "/.." });
    try {
      // The server reads its script from its folder: copy it there.
      await Deno.mkdir(join(folder, "tests/mcp"), { recursive: true });
      await Deno.copyFile(SERVER, join(folder, "tests/mcp/_probe_server.ts"));
      await Deno.copyFile(join(REPO, "deno.json"), join(folder, "deno.json"));
      await Deno.copyFile(join(REPO, "deno.lock"), join(folder, "deno.lock"));
      const spec = {
        ...probeServer(folder, { writable: true }),
        args: [
          "run",
          "-A",
          "--cached-only",
          join(folder, "tests/mcp/_probe_server.ts"),
        ],
      } as McpProcessSpec;
      await withProbe(
        spec,
        () => Promise.resolve(status),
        async (servers, targets) => {
          const report = (await call(servers, "probe", targets) as {
            value: Record<string, string>;
          }).value;
          assert.equal(report.write, "ok");
          assert.equal(
            await Deno.readTextFile(String(targets.write)),
            "planted",
          );
          assert.match(report.read!, /^denied: NotFound/);
        },
      );
    } finally {
      await Deno.remove(folder, { recursive: true });
    }
  },
});

Deno.test('"required" confinement that does not work: the server is not started, listed unavailable with the reason', async () => {
  const marker = join(await Deno.makeTempDir(), "started");
  const servers = createImportedServers({
    servers: { probe: { command: "touch", args: [marker] } },
    confinement: () =>
      detectConfinement("required", { bwrap: "/nonexistent/bwrap" }),
  });
  try {
    await servers.start();
    const kit = servers.modules()[0]!.module.definitions[0]!;
    assert.match(
      String(kit.fields.description),
      /unavailable: .*required.*bwrap/,
    );
    const result = await call(servers, "probe", {});
    assert.equal(result.ok, false);
    await assert.rejects(Deno.stat(marker));
  } finally {
    await servers.close();
  }
});
