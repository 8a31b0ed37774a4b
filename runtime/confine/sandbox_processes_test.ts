import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Confiner, prepareSandboxCache } from "./sandbox_processes.ts";
import { confineArgs, detectConfinement } from "./confine.ts";
import { SANDBOX_MAIN } from "../sandbox/sandbox_process.ts";

const status = await detectConfinement("auto");

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await files(path));
    else out.push(path);
  }
  return out;
}

Deno.test("prepareSandboxCache() compiles the sandbox main into its own folder, WAL settled", async () => {
  const denoDir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(denoDir, "npm"));
    const dir = await prepareSandboxCache({
      execPath: Deno.execPath(),
      denoDir,
      mains: [SANDBOX_MAIN],
    });
    assert.equal(dir, join(denoDir, "skillbox_sandbox"));
    const emitted = await files(join(dir, "gen"));
    assert.ok(
      emitted.some((f) => f.endsWith("/sandbox/process/main.ts.js")),
      emitted.join("\n"),
    );
    assert.ok(
      emitted.some((f) => f.endsWith("/sandbox/process/workers.ts.js")),
    );
    const db = new DatabaseSync(join(dir, "v8_code_cache_v2"), {
      readOnly: true,
    });
    const mode = db.prepare("PRAGMA journal_mode").get() as {
      journal_mode: string;
    };
    db.close();
    assert.equal(mode.journal_mode, "delete");
    // Preparing again (a second host) is fine.
    assert.equal(
      await prepareSandboxCache({
        execPath: Deno.execPath(),
        denoDir,
        mains: [],
      }),
      dir,
    );
  } finally {
    await Deno.remove(denoDir, { recursive: true });
  }
});

Deno.test({
  name:
    "a confined process keeps what it compiles private: the sandbox cache on the host gets nothing",
  // Needs OS confinement (bubblewrap).
  ignore: !status.active,
  async fn() {
    const layout = status.layout!;
    const cacheDir = await prepareSandboxCache({
      execPath: layout.execPath,
      denoDir: layout.denoDir,
      mains: [],
    });
    const work = await Deno.makeTempDir();
    try {
      // A principal's module, unique to this run: if Deno could cache its
      // emit on the host, it would appear under gen/ beside skillbox's own
      // files.
      const mod = join(work, `principal_${crypto.randomUUID()}.ts`);
      const emit = join(cacheDir, "gen", "file", mod + ".js");
      await Deno.writeTextFile(
        mod,
        `const x: number = 1;
        let wrote = "no";
        try { Deno.writeTextFileSync(${
          JSON.stringify(join(cacheDir, "planted"))
        }, "x"); wrote = "yes"; } catch { /* refused */ }
        let saved = "no";
        try { Deno.statSync(${
          JSON.stringify(emit)
        }); saved = "yes"; } catch { /* none */ }
        console.log(String(x) + " " + wrote + " " + saved);`,
      );
      const cmd = confineArgs(layout, {
        grant: { read: [work] },
        runtimeFiles: [],
        args: [
          "run",
          "--quiet",
          "--no-prompt",
          "--no-lock",
          "--cached-only",
          `--allow-read=${work},${cacheDir}`,
          `--allow-write=${cacheDir}`,
          mod,
        ],
        env: {},
        cacheDir,
      });
      assert.equal(cmd.env.DENO_DIR, cacheDir);
      const out = await new Deno.Command(cmd.command, {
        args: cmd.args,
        env: cmd.env,
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const err = new TextDecoder().decode(out.stderr);
      assert.equal(out.success, true, err);
      // Inside, the write and Deno's own save of the compiled module both
      // land in the process's private tmpfs (a failed save would cost a
      // 150 ms retry); on the host, nothing.
      assert.equal(new TextDecoder().decode(out.stdout).trim(), "1 yes yes");
      await assert.rejects(Deno.lstat(join(cacheDir, "planted")));
      const cached = await files(join(cacheDir, "gen")).catch(() => []);
      assert.ok(!cached.some((f) => f.includes("principal_")), cached.join());
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  },
});

Deno.test({
  name: "Confiner.wrapperFor() prepares a main once, and again after it failed",
  ignore: !status.active,
  async fn() {
    const confiner = new Confiner("auto");
    const wrapper = confiner.wrapperFor(SANDBOX_MAIN);
    assert.equal(confiner.wrapperFor(SANDBOX_MAIN), wrapper);
    await wrapper;
    // A main that is not there fails its preparation: the next asker
    // prepares it again rather than getting the old failure.
    const missing = new URL("./no_such_main.ts", import.meta.url);
    const failed = confiner.wrapperFor(missing);
    await assert.rejects(failed, Deno.errors.NotFound);
    assert.notEqual(confiner.wrapperFor(missing), failed);
    await assert.rejects(confiner.wrapperFor(missing), Deno.errors.NotFound);
  },
});
