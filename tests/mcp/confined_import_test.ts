/**
 * Imported stdio MCP servers run inside the sandbox's OS confinement: a
 * server that tries to read a host file outside its folder, see a host
 * process, connect to a loopback server or write its read-only folder is
 * denied each, and still lists and calls (with progress) normally. The
 * same probe unconfined succeeds, so the denials are the confinement's.
 * `"required"` without bubblewrap: the server does not start, listed
 * unavailable with the reason. Through a real host, entries written the
 * way Claude Desktop's configuration writes them: paths in `args` the
 * mount rule refuses (`/etc/shadow`, `/`, a link out, a `..` path, `~`)
 * keep the server from starting, with the rule; the host's config is
 * hidden inside a folder the server sees; a failed start shows its first
 * meaningful error line.
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import {
  type ConfinementStatus,
  detectConfinement,
} from "../../runtime/confine/confine.ts";
import { createImportedServers } from "../../runtime/mcp/imported_servers.ts";
import type { McpProcessSpec } from "../../runtime/mcp/imported_process.ts";
import {
  call as importCall,
  IGNORE_PYTHON,
  PYTHON_SERVER,
  pythonVenv,
  withServers,
} from "./_import_host.ts";

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

// --- Claude-Desktop-style entries and the mount rule, through a real host ---
//
// The Python fixture server under a virtual environment's interpreter: its
// `where` tool reads the path it is given and says "ok: <bytes>" or
// "denied: <error>".

const where = async (
  client: Parameters<Parameters<typeof withServers>[1]>[0]["client"],
  path: string,
): Promise<string> => {
  const answer = await importCall(client, "py__where", { path });
  assert.equal(answer.isError, false, answer.text);
  return JSON.parse(answer.text).read;
};

Deno.test({
  name:
    "args naming /etc/shadow, /, a link out, a .. path or ~ are refused with the rule, and the server is not started",
  ignore: ignore || IGNORE_PYTHON,
  async fn() {
    const { root, python } = await pythonVenv();
    const links = await Deno.makeTempDir({ prefix: "skillbox-links-" });
    await Deno.symlink("/etc", join(links, "etc-link"));
    await Deno.symlink("/", join(links, "root-link"));
    const entry = (arg: string) => ({
      command: python,
      args: [PYTHON_SERVER, arg],
    });
    try {
      await withServers({
        shadow: entry("/etc/shadow"),
        slash: entry("/"),
        link: entry(join(links, "etc-link")),
        rootlink: entry(join(links, "root-link", "home")),
        dots: entry(`${links}/../../etc/passwd`),
        proc: entry("/proc/self/environ"),
        tilde: entry("~/.ssh"),
        home: { command: python, args: [PYTHON_SERVER], read: ["/root"] },
      }, async ({ failureOf }) => {
        assert.match(
          await failureOf("shadow"),
          /Cannot mount "\/etc\/shadow" named in "args": "\/etc\/shadow" is under "\/etc", never mounted/,
        );
        assert.match(
          await failureOf("slash"),
          /Cannot mount "\/" named in "args": "\/" is never mounted as a whole/,
        );
        assert.match(await failureOf("link"), /"\/etc" is under "\/etc"/);
        assert.match(
          await failureOf("rootlink"),
          /"\/home" is never mounted as a whole/,
        );
        assert.match(
          await failureOf("dots"),
          /"\/etc\/passwd" is under "\/etc", never mounted/,
        );
        assert.match(await failureOf("proc"), /under "\/proc"/);
        assert.match(await failureOf("tilde"), /"~" is not expanded/);
        assert.match(
          await failureOf("home"),
          /named in "read": "\/root" is never mounted as a whole/,
        );
      });
    } finally {
      await Deno.remove(links, { recursive: true });
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a confined server sees its args read-only, the CA and resolver files, and neither the host's config nor other host files",
  ignore: ignore || IGNORE_PYTHON,
  async fn() {
    const { root, python } = await pythonVenv();
    const data = await Deno.makeTempDir({ prefix: "skillbox-data-" });
    const outside = await Deno.makeTempDir({ prefix: "skillbox-outside-" });
    // The host's config lives inside the folder the server is given.
    const config = join(data, "skillbox.jsonc");
    await Deno.writeTextFile(config, '{ "tokens": ["host-secret-token"] }');
    await Deno.writeTextFile(join(data, "note.txt"), "12345");
    await Deno.writeTextFile(join(outside, "secret.txt"), "host secret");
    await Deno.symlink(join(outside, "secret.txt"), join(data, "link.txt"));
    try {
      await withServers({
        py: { command: python, args: [PYTHON_SERVER, data] },
        named: { command: python, args: [PYTHON_SERVER, config] },
      }, async ({ client, toolsOf, failureOf }) => {
        await toolsOf("py");
        assert.equal(
          await where(client, join(data, "note.txt")),
          "ok: 5 bytes",
        );
        // Hidden: /dev/null is bound over it (a device on a nodev mount:
        // it cannot even be opened).
        assert.match(
          await where(client, config),
          /^(denied: PermissionError|ok: 0 bytes)$/,
        );
        // A link in the folder points at a path the namespace lacks.
        assert.match(
          await where(client, join(data, "link.txt")),
          /^denied: FileNotFoundError/,
        );
        assert.match(
          await where(client, join(outside, "secret.txt")),
          /^denied: FileNotFoundError/,
        );
        assert.match(await where(client, "/etc/passwd"), /^denied: /);
        assert.match(await where(client, "/etc/ssl/private"), /^denied: /);
        for (
          const file of ["/etc/ssl/certs/ca-certificates.crt", "/etc/hosts"]
        ) {
          const onHost = await Deno.stat(file).then(() => true, () => false);
          if (onHost) assert.match(await where(client, file), /^ok: \d+ bytes/);
        }
        assert.match(
          await failureOf("named"),
          /named in "args": .*one of the host's own files/,
        );
      }, { configPath: config });
    } finally {
      await Deno.remove(data, { recursive: true });
      await Deno.remove(outside, { recursive: true });
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a server that fails to start shows its first meaningful error line, not Node's banner",
  ignore: ignore || IGNORE_PYTHON,
  async fn() {
    const { root } = await pythonVenv();
    // The base interpreter, not the environment's: venv_probe is missing.
    const base = (await Deno.readTextFile(join(root, "pyvenv.cfg")))
      .match(/^executable = (.+)$/m)?.[1] ?? "python3";
    const missing = join(root, "missing.js");
    try {
      await withServers({
        node: { command: "node", args: [missing] },
        base: { command: base, args: [PYTHON_SERVER] },
      }, async ({ failureOf }) => {
        const node = await failureOf("node");
        assert.match(
          node,
          new RegExp(
            `\\(stderr: Error: Cannot find module '${missing}'\\)(;|$)`,
          ),
        );
        assert.doesNotMatch(node, /Node\.js v/);
        assert.match(
          await failureOf("base"),
          /\(stderr: ModuleNotFoundError: No module named 'venv_probe'\)(;|$)/,
        );
      });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

// The npm registry is the one public host CI reaches.
const REGISTRY = "https://registry.npmjs.org/";
const registryReachable = await fetch(REGISTRY, { method: "HEAD" }).then(
  (r) => r.body?.cancel().then(() => true) ?? true,
  () => false,
);

Deno.test({
  name:
    "a confined server granted a host verifies its TLS with the system's CA certificates",
  ignore: ignore || IGNORE_PYTHON || !registryReachable,
  async fn() {
    const { root, python } = await pythonVenv();
    try {
      await withServers({
        py: {
          command: python,
          args: [PYTHON_SERVER],
          hosts: ["registry.npmjs.org"],
        },
      }, async ({ client, toolsOf }) => {
        await toolsOf("py");
        const answer = await importCall(client, "py__where", { url: REGISTRY });
        assert.equal(JSON.parse(answer.text).fetch, "ok: 200");
        // Some build machines reach the registry at a private address.
      }, { allowPrivateHosts: ["registry.npmjs.org"] });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});
