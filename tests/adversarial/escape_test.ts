import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createSandbox,
  type SandboxPool,
} from "../../runtime/sandbox/sandbox.ts";
import type { Policy } from "../../runtime/sandbox/grants.ts";
import {
  assertNormalCallWorks,
  callFixture,
  FIXTURES,
  valueOf,
} from "./_helpers.ts";

const HOST = join(FIXTURES, "fake_host");
const REPO = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

function policy(extra: Policy = {}): Policy {
  return {
    deny: [HOST, join(REPO, "runtime"), join(REPO, "deno.json")],
    sharedFolders: [join(FIXTURES, "shared")],
    ...extra,
  };
}

async function withSandbox(
  fn: (sandbox: SandboxPool) => Promise<void>,
  extra: Policy = {},
): Promise<void> {
  const sandbox = createSandbox({ cacheDir: null, policy: policy(extra) });
  try {
    await fn(sandbox);
    await assertNormalCallWorks(sandbox);
  } finally {
    await sandbox.close();
  }
}

Deno.test("a skill cannot start a nested worker from a blob: URL", async () => {
  await withSandbox(async (sandbox) => {
    const { outcome } = await callFixture(sandbox, "nested_worker");
    assert.deepEqual(valueOf(outcome), { escaped: false, reason: "no Worker" });
  });
});

Deno.test("import() of computed paths outside the grant is denied", async (t) => {
  await withSandbox(async (sandbox) => {
    const targets = {
      "a sibling module in a shared folder": "sibling.ts",
      "a ../ path into another skill": "../read_files/mod.ts",
      "the host's files": "../fake_host/runtime/secret.ts",
      "the host's real source": "../../../../runtime/errors.ts",
    };
    for (const [what, target] of Object.entries(targets)) {
      await t.step(what, async () => {
        const { outcome } = await callFixture(sandbox, "shared/dyn_import.ts", {
          args: { target },
        });
        const value = valueOf(outcome);
        assert.equal(value.loaded, false);
        assert.match(String(value.error), /Requires read access/);
      });
    }
  });
});

Deno.test("reading outside the grant is denied inside the skill", async (t) => {
  await withSandbox(async (sandbox) => {
    const paths = {
      "/etc/passwd": "/etc/passwd",
      "the host's skillbox.jsonc": join(HOST, "skillbox.jsonc"),
      "another skill's folder": join(FIXTURES, "other", "secret.txt"),
      "the host's deno.json": join(REPO, "deno.json"),
    };
    for (const [what, path] of Object.entries(paths)) {
      await t.step(what, async () => {
        const { outcome } = await callFixture(sandbox, "read_files", {
          args: { path },
        });
        assert.deepEqual(valueOf(outcome), {
          read: false,
          error: "NotCapable",
        });
      });
    }
    await t.step("its own folder stays readable", async () => {
      const { outcome } = await callFixture(sandbox, "read_files", {
        args: { path: join(FIXTURES, "read_files", "mod.ts") },
      });
      assert.equal(valueOf(outcome).read, true);
    });
  });
});

Deno.test("writing outside the grant is denied, inside it works", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await withSandbox(async (sandbox) => {
      const grant = { write: [join(dir, "out")] };
      await Deno.mkdir(join(dir, "out"));
      const outside = await callFixture(sandbox, "write_outside", {
        args: { path: join(dir, "elsewhere.txt") },
        grant,
      });
      assert.deepEqual(valueOf(outside.outcome), {
        written: false,
        error: "NotCapable",
      });
      const inside = await callFixture(sandbox, "write_outside", {
        args: { path: join(dir, "out", "ok.txt") },
        grant,
      });
      assert.deepEqual(valueOf(inside.outcome), { written: true });
      assert.equal(
        await Deno.readTextFile(join(dir, "out", "ok.txt")),
        "written",
      );
    }, { write: [dir] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Deno.env.get of a variable not granted is denied", async () => {
  Deno.env.set("SKILLBOX_TEST_SECRET", "hunter2");
  await withSandbox(async (sandbox) => {
    const { outcome } = await callFixture(sandbox, "env_read", {
      args: { name: "SKILLBOX_TEST_SECRET" },
    });
    assert.deepEqual(valueOf(outcome), { read: false, error: "NotCapable" });
    const granted = await callFixture(sandbox, "env_read", {
      args: { name: "SKILLBOX_TEST_SECRET" },
      grant: { env: ["SKILLBOX_TEST_SECRET"] },
    });
    assert.deepEqual(valueOf(granted.outcome), {
      read: true,
      value: "hunter2",
    });
  }, { env: ["SKILLBOX_TEST_SECRET"] });
});

Deno.test("fetch to hosts not granted is denied, including the host's own ports", async (t) => {
  const server = Deno.serve(
    { hostname: "0.0.0.0", port: 0, onListen() {} },
    () => new Response("host secret"),
  );
  const port = server.addr.port;
  try {
    await withSandbox(async (sandbox) => {
      const grant = { net: ["example.org"] };
      const urls = {
        "a host not granted": "https://example.com/",
        "127.0.0.1 at the host's port": `http://127.0.0.1:${port}/`,
        "[::1] at the host's port": `http://[::1]:${port}/`,
        "localhost": `http://localhost:${port}/`,
      };
      for (const [what, url] of Object.entries(urls)) {
        await t.step(what, async () => {
          const { outcome } = await callFixture(sandbox, "fetch", {
            args: { url },
            grant,
          });
          assert.deepEqual(valueOf(outcome), {
            fetched: false,
            error: "NotCapable",
          });
        });
      }
    }, { net: ["example.org"] });
  } finally {
    await server.shutdown();
  }
});

Deno.test("Deno.Command without run is denied", async () => {
  await withSandbox(async (sandbox) => {
    const { outcome } = await callFixture(sandbox, "command");
    assert.deepEqual(valueOf(outcome), { ran: false, error: "NotCapable" });
  });
});

Deno.test("code is never fetched from the network: npm only from the cache, no URLs", async (t) => {
  await withSandbox(async (sandbox) => {
    await t.step(
      "an npm package missing from the cache is not downloaded",
      async () => {
        // A name no cache holds: without --cached-only the runtime itself
        // would ask the registry for it, no net grant needed.
        const { outcome } = await callFixture(sandbox, "remote_import", {
          args: { spec: "npm:skillbox-never-published-x9q@1.0.0" },
        });
        const value = valueOf(outcome);
        assert.equal(value.loaded, false);
        assert.match(String(value.error), /--cached-only/);
      },
    );
    await t.step("https: imports are refused", async () => {
      const { outcome } = await callFixture(sandbox, "remote_import", {
        args: { spec: "https://deno.land/std@0.224.0/path/mod.ts" },
      });
      assert.equal(valueOf(outcome).loaded, false);
    });
    await t.step(
      "a cached npm package still loads (zod schemas need it)",
      async () => {
        const { outcome } = await callFixture(sandbox, "remote_import", {
          args: { spec: "npm:zod@4.6.7" },
        });
        assert.equal(valueOf(outcome).loaded, true);
      },
    );
  });
});
