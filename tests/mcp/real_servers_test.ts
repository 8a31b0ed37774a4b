/**
 * The MCP servers people use, imported confined with the entries Claude
 * Desktop's configuration has, end to end through a real host and the
 * official SDK client on `/mcp`:
 * - the official Node servers from npm (`@modelcontextprotocol/server-
 *   filesystem`, `-memory`, `-everything`, pinned) as
 *   `{"command": "node", "args": [".../dist/index.js", dataDir]}`: they list
 *   and call; the filesystem server writes its data folder only with
 *   `write`; the memory server keeps its file where `write` allows;
 * - `npx -y --offline <server>@<version>` from a warm npm cache of its own,
 *   granted `write` (npm rewrites its cache index even to read it);
 * - a Python server run by a virtual environment's interpreter, importing
 *   a module that exists only in that environment's site-packages.
 *
 * The servers are installed with npm into a cache folder this test owns
 * (`$SKILLBOX_MCP_SERVERS`, default `<temp>/skillbox-mcp-servers`); `.ci/run`
 * warms it with the command in `INSTALL`, then `npm_config_cache=<that>/npm-cache
 * npx -y @modelcontextprotocol/server-memory@<version> </dev/null`. Without npm or the
 * registry the npm tests are skipped with a message, except under
 * `CI=true`, where they fail. Without working bubblewrap, all are ignored.
 */

import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectConfinement } from "../../runtime/confine/confine.ts";
import { skipOutsideCi } from "../support/skip.ts";
import {
  call,
  IGNORE_PYTHON,
  PYTHON_SERVER,
  pythonVenv,
  withServers,
} from "./_import_host.ts";

const VERSION = "2026.8.31";
const PACKAGES = ["filesystem", "memory", "everything"].map((s) =>
  `@modelcontextprotocol/server-${s}@${VERSION}`
);
const SERVERS = Deno.env.get("SKILLBOX_MCP_SERVERS") ??
  join(tmpdir(), "skillbox-mcp-servers");
/** The install `.ci/run` warms the cache with (and this test runs if needed). */
const INSTALL = [
  "install",
  "--prefix",
  SERVERS,
  "--no-audit",
  "--no-fund",
  "--no-save",
  ...PACKAGES,
];
// npx's own cache for the `npx -y` entry, inside the test's folder.
const NPM_CACHE = join(SERVERS, "npm-cache");
const NPX_MEMORY = `@modelcontextprotocol/server-memory@${VERSION}`;

const status = await detectConfinement("auto");
const installed = status.active ? await install() : "confinement is off";
const ignoreNpm = skipOutsideCi("the real npm MCP server tests", installed) ||
  !status.active;

/** Installs the pinned servers unless there; null when ready, else why not. */
async function install(): Promise<string | null> {
  const ready = async () => {
    for (const s of ["filesystem", "memory", "everything"]) {
      const file = join(
        SERVERS,
        `node_modules/@modelcontextprotocol/server-${s}/package.json`,
      );
      const pkg = await Deno.readTextFile(file).then(JSON.parse, () => null);
      if (pkg?.version !== VERSION) return false;
    }
    return true;
  };
  if (await ready() && await warmNpx()) return null;
  const out = await new Deno.Command("npm", {
    args: INSTALL,
    stdout: "piped",
    stderr: "piped",
  }).output().catch((e: Error) => e);
  if (out instanceof Error) return `cannot run npm: ${out.message}`;
  if (!out.success || !await ready()) {
    return `npm ${INSTALL.join(" ")} failed: ${
      new TextDecoder().decode(out.stderr).slice(-300)
    }`;
  }
  return await warmNpx() ? null : `npx ${NPX_MEMORY} did not warm its cache`;
}

/**
 * Warms `npx`'s cache the way a user would: one run of the server
 * online (it exits when its stdin closes). True when the cache holds it.
 */
async function warmNpx(): Promise<boolean> {
  const holds = async () => {
    try {
      for await (const dir of Deno.readDir(join(NPM_CACHE, "_npx"))) {
        const pkg = join(
          NPM_CACHE,
          "_npx",
          dir.name,
          "node_modules/@modelcontextprotocol/server-memory/package.json",
        );
        const found = await Deno.readTextFile(pkg).then(JSON.parse, () => null);
        if (found?.version === VERSION) return true;
      }
    } catch {
      // No cache yet.
    }
    return false;
  };
  if (await holds()) return true;
  await new Deno.Command("npx", {
    args: ["-y", NPX_MEMORY],
    env: { npm_config_cache: NPM_CACHE },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output().catch(() => null);
  return await holds();
}

const dist = (server: string) =>
  join(
    SERVERS,
    `node_modules/@modelcontextprotocol/server-${server}/dist/index.js`,
  );

async function dataFolder(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "skillbox-data-" });
  await Deno.mkdir(join(dir, "sub"));
  await Deno.writeTextFile(join(dir, "hello.txt"), "hello from the host");
  return dir;
}

Deno.test({
  name:
    "the official filesystem server, as Claude Desktop writes it, reads its data folder confined and writes it only with write",
  ignore: ignoreNpm,
  async fn() {
    const data = await dataFolder();
    const entry = { command: "node", args: [dist("filesystem"), data] };
    try {
      await withServers({
        fs: entry,
        fsw: { ...entry, write: [data] },
        // Its folder named inside a folder granted write stays writable.
        sub: {
          command: "node",
          args: [dist("filesystem"), join(data, "sub")],
          write: [data],
        },
      }, async ({ client, toolsOf }) => {
        const tools = await toolsOf("fs");
        assert.ok(tools.includes("fs__read_text_file"), tools.join(", "));
        const read = await call(client, "fs__read_text_file", {
          path: join(data, "hello.txt"),
        });
        assert.equal(read.isError, false, read.text);
        assert.match(read.text, /hello from the host/);

        // Read-only without `write`: the server's own error says why.
        const refused = await call(client, "fs__write_file", {
          path: join(data, "ro.txt"),
          content: "x",
        });
        assert.ok(refused.isError, refused.text);
        assert.match(refused.text, /read-only|EROFS|EACCES|denied/i);
        await assert.rejects(Deno.stat(join(data, "ro.txt")));

        // Each server joins when it is up: wait for the other two too.
        assert.ok((await toolsOf("fsw")).includes("fsw__write_file"));
        assert.ok((await toolsOf("sub")).includes("sub__write_file"));
        const wrote = await call(client, "fsw__write_file", {
          path: join(data, "rw.txt"),
          content: "written confined",
        });
        assert.equal(wrote.isError, false, wrote.text);
        assert.equal(
          await Deno.readTextFile(join(data, "rw.txt")),
          "written confined",
        );
        const nested = await call(client, "sub__write_file", {
          path: join(data, "sub", "nested.txt"),
          content: "nested",
        });
        assert.equal(nested.isError, false, nested.text);
        assert.equal(
          await Deno.readTextFile(join(data, "sub", "nested.txt")),
          "nested",
        );
      });
    } finally {
      await Deno.remove(data, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the official memory server creates and reads an entity, its file in a folder granted write",
  ignore: ignoreNpm,
  async fn() {
    const data = await dataFolder();
    const file = join(data, "memory.jsonl");
    try {
      await withServers({
        memory: {
          command: "node",
          args: [dist("memory")],
          env: { MEMORY_FILE_PATH: file },
          write: [data],
        },
      }, async ({ client, toolsOf }) => {
        assert.ok(
          (await toolsOf("memory")).includes("memory__create_entities"),
        );
        const created = await call(client, "memory__create_entities", {
          entities: [{
            name: "skillbox",
            entityType: "project",
            observations: ["runs MCP servers confined"],
          }],
        });
        assert.equal(created.isError, false, created.text);
        const graph = await call(client, "memory__read_graph", {});
        assert.match(graph.text, /runs MCP servers confined/);
        assert.match(await Deno.readTextFile(file), /skillbox/);
      });
    } finally {
      await Deno.remove(data, { recursive: true });
    }
  },
});

Deno.test({
  name: "the official everything server echoes, confined",
  ignore: ignoreNpm,
  async fn() {
    await withServers({
      everything: { command: "node", args: [dist("everything"), "stdio"] },
    }, async ({ client, toolsOf }) => {
      assert.ok((await toolsOf("everything")).includes("everything__echo"));
      const echoed = await call(client, "everything__echo", {
        message: "confined hello",
      });
      assert.equal(echoed.isError, false, echoed.text);
      assert.match(echoed.text, /confined hello/);
    });
  },
});

Deno.test({
  name:
    "a Python server run by a virtual environment's interpreter imports what only that environment holds",
  ignore: !status.active || IGNORE_PYTHON,
  async fn() {
    const { root, python } = await pythonVenv();
    try {
      await withServers({
        py: { command: python, args: [PYTHON_SERVER] },
      }, async ({ client, toolsOf }) => {
        assert.deepEqual(await toolsOf("py"), ["py__where"]);
        const where = await call(client, "py__where", {});
        assert.equal(where.isError, false, where.text);
        const report = JSON.parse(where.text);
        assert.equal(report.probe, "found in the virtual environment");
        assert.equal(report.prefix, root);
        assert.equal(report.executable, python);
      });
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "npx runs the official memory server from a warm cache, offline and confined",
  ignore: ignoreNpm,
  async fn() {
    const data = await dataFolder();
    const file = join(data, "memory.jsonl");
    try {
      await withServers({
        memory: {
          command: "npx",
          args: ["-y", "--offline", NPX_MEMORY],
          env: { npm_config_cache: NPM_CACHE, MEMORY_FILE_PATH: file },
          write: [NPM_CACHE, data],
        },
      }, async ({ client, toolsOf }) => {
        assert.ok(
          (await toolsOf("memory")).includes("memory__create_entities"),
        );
        const created = await call(client, "memory__create_entities", {
          entities: [{
            name: "npx",
            entityType: "tool",
            observations: ["warm"],
          }],
        });
        assert.equal(created.isError, false, created.text);
        assert.match(await Deno.readTextFile(file), /"npx"/);
      });
    } finally {
      await Deno.remove(data, { recursive: true });
    }
  },
});
