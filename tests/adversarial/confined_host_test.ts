/**
 * The shipped toolkits attacked through a real host, where Deno's own
 * checks cannot hold and only OS confinement does: a symlink raced under
 * the filesystem toolkit, an allow-listed git turned into a shell. Each also
 * checks the host keeps serving. Ignored, saying why, where confinement does not work.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import {
  confinement,
  CONFINEMENT_MODE,
  NEEDS_CONFINEMENT,
} from "./_confined.ts";

const ignore = !confinement.active;

interface Fixture {
  host: Host;
  data: string;
  skills: string;
  secret: string;
  port: number;
  close(): Promise<void>;
}

async function start(): Promise<Fixture> {
  const data = await Deno.makeTempDir({ prefix: "granted_" });
  const outside = await Deno.makeTempDir({ prefix: "outside_" });
  const skills = await Deno.makeTempDir({ prefix: "skills_" });
  const secret = join(outside, "secret.txt");
  await Deno.writeTextFile(secret, "TOP-SECRET\n");
  await Deno.writeTextFile(join(data, "inside.txt"), "inside\n");
  await Deno.writeTextFile(join(data, "serving.txt"), "serving\n");
  const git = await new Deno.Command("git", { args: ["init", "-q", data] })
    .output();
  assert.equal(git.code, 0);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("reached the host's loopback"),
  );
  const host = createHost({
    config: {
      skills: [skills],
      sandbox: {
        cacheDir: null,
        memoryMb: 256,
        maxIdleProcesses: 8,
        spareWorkers: 1,
        maxResultBytes: 1 << 20,
        confinement: CONFINEMENT_MODE === "off" ? "off" : "required",
      },
      policy: {
        permissions: {
          read: [data],
          write: [data],
          net: ["127.0.0.1"],
          run: ["git"],
        },
      },
    },
  });
  await host.ready;
  return {
    host,
    data,
    skills,
    secret,
    port: server.addr.port,
    async close() {
      await host.close({ timeoutSeconds: 1 });
      await server.shutdown();
      for (const dir of [data, outside, skills]) {
        await Deno.remove(dir, { recursive: true });
      }
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

async function assertServing(host: Host): Promise<void> {
  const read = await host.callTool("read_file", { path: "serving.txt" });
  assert.equal(read.success, true, String(read.error));
  assert.equal((read.data as { content: string }).content, "serving\n");
}

function leaked(result: unknown): boolean {
  return /TOP-SECRET/.test(JSON.stringify(result));
}

Deno.test({
  name:
    "a symlink raced under the filesystem toolkit never reads outside its root" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const f = await start();
    let swapping = true;
    const link = join(f.data, "link.txt");
    const swapper = (async () => {
      let flips = 0;
      while (swapping) {
        const tmp = `${link}.${flips++}`;
        await Deno.symlink(
          flips % 2 ? f.secret : join(f.data, "inside.txt"),
          tmp,
        );
        await Deno.rename(tmp, link);
        // Yield so the host can serve the calls racing it.
        await new Promise((r) => setTimeout(r, 0));
      }
      return flips;
    })();
    try {
      await configure(f.host, "filesystem", { root: f.data, writable: true });
      let reads = 0;
      for (let i = 0; i < 60; i++) {
        const read = await f.host.callTool("read_file", { path: "link.txt" });
        if (read.success) reads++;
        assert.equal(leaked(read), false, `call ${i} read the secret`);
        const grep = await f.host.callTool("grep", { pattern: "SECRET" });
        assert.equal(leaked(grep), false, `grep ${i} read the secret`);
        const write = await f.host.callTool("write_file", {
          path: "link.txt",
          content: "overwritten",
        });
        assert.ok(write.success !== undefined);
      }
      swapping = false;
      assert.ok((await swapper) > 10, "the race ran");
      assert.ok(reads > 0, "some reads went through the link inside");
      assert.equal(await Deno.readTextFile(f.secret), "TOP-SECRET\n");
      await assertServing(f.host);
    } finally {
      swapping = false;
      await swapper;
      await f.close();
    }
  },
});

Deno.test({
  name:
    "an allow-listed git cannot become a shell that reads outside the grant" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    const f = await start();
    try {
      await configure(f.host, "filesystem", { root: f.data });
      await configure(f.host, "shell", {
        allowed_commands: ["git"],
        cwd: f.data,
      });
      const attempts = [
        ["-c", `alias.x=!cat ${f.secret}; cat /etc/passwd; env`, "x"],
        ["-c", `core.pager=cat ${f.secret}`, "-p", "log"],
        ["ls-remote", `--upload-pack=cat ${f.secret}`, "."],
        ["-c", `core.sshCommand=cat ${f.secret}`, "ls-remote", "ssh://x/y"],
      ];
      for (const args of attempts) {
        const result = await f.host.callTool("run_command", {
          command: "git",
          args,
        });
        assert.equal(leaked(result), false, args.join(" "));
        assert.doesNotMatch(JSON.stringify(result), /root:x:0:0/);
      }
      // The alias ran (the attack was tried) and found nothing to read.
      const alias = await f.host.callTool("run_command", {
        command: "git",
        args: ["-c", `alias.x=!cat ${f.secret}`, "x"],
      });
      assert.match(JSON.stringify(alias), /No such file/);
      await assertServing(f.host);
    } finally {
      await f.close();
    }
  },
});

Deno.test({
  name:
    "a link planted where another grant's mount comes from never shows the host" +
    NEEDS_CONFINEMENT,
  ignore,
  async fn() {
    // Module code with a write grant and an allowed binary that makes links
    // plants one where a later process's grant is mounted from: bubblewrap
    // follows links in a mount's source, so that process would see the
    // link's target (here a host folder no grant names) at its grant.
    const data = await Deno.makeTempDir({ prefix: "granted_" });
    const outside = await Deno.makeTempDir({ prefix: "outside_" });
    const skills = await Deno.makeTempDir({ prefix: "skills_" });
    await Deno.writeTextFile(join(outside, "secret.txt"), "TOP-SECRET\n");
    const view = join(data, "view");
    const tool = async (name: string, permissions: object, run: string) => {
      await Deno.mkdir(join(skills, name));
      await Deno.writeTextFile(
        join(skills, name, "mod.ts"),
        `export default {
           kind: "tool", name: "${name}", description: "${name}",
           permissions: ${JSON.stringify(permissions)},
           async run() { ${run} },
         };`,
      );
    };
    await tool(
      "planter",
      { write: [data], run: ["ln"] },
      `const out = await new Deno.Command("ln", {
         args: ["-s", ${JSON.stringify(outside)}, ${JSON.stringify(view)}],
       }).output();
       return { code: out.code };`,
    );
    await tool(
      "reader",
      { read: [view] },
      `return Deno.readTextFileSync(${
        JSON.stringify(join(view, "secret.txt"))
      });`,
    );
    const host = createHost({
      config: {
        skills: [skills],
        sandbox: {
          cacheDir: null,
          memoryMb: 256,
          maxIdleProcesses: 8,
          spareWorkers: 1,
          maxResultBytes: 1 << 20,
          confinement: "required",
        },
        policy: { permissions: { read: [data], write: [data], run: ["ln"] } },
      },
    });
    try {
      const { errors } = await host.ready;
      assert.deepEqual(errors, []);
      const planted = await host.callTool("planter", {});
      assert.equal(planted.success, true, String(planted.error));
      assert.deepEqual(planted.data, { code: 0 });
      // The link is there on the host, pointing outside every grant.
      assert.equal((await Deno.lstat(view)).isSymlink, true);
      const read = await host.callTool("reader", {});
      assert.equal(leaked(read), false, "the reader saw the host's folder");
      assert.equal(read.success, false);
    } finally {
      await host.close({ timeoutSeconds: 1 });
      for (const dir of [data, outside, skills]) {
        await Deno.remove(dir, { recursive: true });
      }
    }
  },
});
