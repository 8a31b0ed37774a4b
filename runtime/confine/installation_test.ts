import assert from "node:assert/strict";
import { join } from "node:path";
import { commandFiles, locateProgram } from "./installation.ts";

async function tree(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir();
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), text);
  }
  return root;
}

Deno.test("commandFiles() finds a virtual environment from the program as named, and its base interpreter", async () => {
  const root = await tree({
    "base/bin/python3.12": "#!binary",
    "base/lib/python3.12/os.py": "",
    "venv/pyvenv.cfg": "", // filled below with the real home
  });
  try {
    await Deno.writeTextFile(
      join(root, "venv/pyvenv.cfg"),
      `home = ${root}/base/bin\ninclude-system-site-packages = false\n`,
    );
    await Deno.mkdir(join(root, "venv/bin"));
    await Deno.symlink(
      join(root, "base/bin/python3.12"),
      join(root, "venv/bin/python"),
    );
    const found = commandFiles(join(root, "venv/bin/python"), { args: [] });
    // Run as named: never resolved to the base interpreter's file.
    assert.equal(found.program, join(root, "venv/bin/python"));
    for (
      const path of ["venv", "venv/bin/python", "base/bin/python3.12", "base"]
    ) {
      assert.ok(found.read.includes(join(root, path)), path);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("commandFiles() mounts a Node script's package folder and the node_modules it resolves from", async () => {
  const root = await tree({
    "cache/node_modules/@scope/server/package.json": '{"type":"module"}',
    "cache/node_modules/@scope/server/dist/index.js": "import 'dep';",
    "cache/node_modules/dep/package.json": "{}",
    "data/a.txt": "a",
  });
  try {
    const script = join(root, "cache/node_modules/@scope/server/dist/index.js");
    const found = commandFiles("sh", {
      args: [script, join(root, "data"), "--port", "stdio"],
      path: "/usr/bin:/bin",
    });
    assert.deepEqual(
      found.read.filter((p) => p.startsWith(root)).sort(),
      [
        join(root, "cache/node_modules"),
        join(root, "cache/node_modules/@scope/server"),
        script,
        join(root, "data"),
      ].sort(),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("commandFiles() follows a script's #! interpreter on PATH", async () => {
  const root = await tree({
    "tools/bin/real-node": "#!binary",
    "pkg/package.json": "{}",
    "pkg/cli.js": "#!/usr/bin/env -S real-node --flag\nconsole.log(1)",
  });
  try {
    await Deno.chmod(join(root, "tools/bin/real-node"), 0o755);
    await Deno.chmod(join(root, "pkg/cli.js"), 0o755);
    await Deno.symlink(join(root, "pkg/cli.js"), join(root, "tools/bin/cli"));
    const found = commandFiles("cli", { path: join(root, "tools/bin") });
    assert.equal(found.program, join(root, "tools/bin/cli"));
    for (
      const path of [
        "tools/bin/cli",
        "pkg/cli.js",
        "pkg",
        "tools/bin/real-node",
      ]
    ) {
      assert.ok(found.read.includes(join(root, path)), path);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("commandFiles() refuses an argument the rule refuses, even absent; words are no paths", () => {
  assert.throws(
    () => commandFiles("sh", { args: ["/etc/not-there"], path: "/usr/bin" }),
    /Cannot mount "\/etc\/not-there" named in "args"/,
  );
  assert.throws(
    () =>
      commandFiles("sh", { args: ["../.."], path: "/usr/bin", cwd: "/srv/a" }),
    /"\/" is never mounted/,
  );
  assert.throws(
    () => commandFiles("sh", { args: ["~"], path: "/usr/bin" }),
    /not expanded/,
  );
  const found = commandFiles("sh", {
    args: ["etc", "-c", "/srv/absent"],
    path: "/usr/bin",
    cwd: "/",
  });
  assert.deepEqual(found.read.filter((p) => !p.startsWith("/usr")), []);
  assert.throws(
    () => commandFiles("surely-absent", { path: "/usr/bin" }),
    /was not found on PATH/,
  );
  assert.equal(locateProgram("./x", { path: "", cwd: "/nonexistent" }), null);
});

Deno.test("commandFiles() holds the program to the rule: a link to a host file is refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.symlink("/etc/passwd", join(dir, "server"));
    assert.throws(
      () => commandFiles(join(dir, "server"), { args: [] }),
      /named in "command": "\/etc\/passwd" is under "\/etc"/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
