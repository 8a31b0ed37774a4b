import assert from "node:assert/strict";
import { join } from "node:path";
import {
  checkGrant,
  GrantCache,
  grantKey,
  grantToFlags,
  grantToWorkerPermissions,
  ownReadPaths,
  OwnReads,
  resolvePermissionPaths,
} from "./grants.ts";
import type { Permissions } from "../../protocol/permissions.ts";

const MODULE = "/skills/fs/mod.ts";

Deno.test("checkGrant() grants only the module's own folder by default", () => {
  const result = checkGrant({}, { modulePath: MODULE });
  assert.deepEqual(result, { ok: true, grant: { read: ["/skills/fs"] } });
});

Deno.test("checkGrant() names the refused permission and entry", async (t) => {
  const cases: [keyof Permissions, Permissions, string][] = [
    ["read", { read: ["/etc"] }, "/etc"],
    ["write", { write: ["/skills/fs/out"] }, "/skills/fs/out"],
    ["net", { net: ["api.example.com"] }, "api.example.com"],
    ["env", { env: ["AWS_SECRET"] }, "AWS_SECRET"],
    ["run", { run: ["sh"] }, "sh"],
    ["sys", { sys: ["hostname"] }, "hostname"],
    ["ffi", { ffi: ["/lib/x.so"] }, "/lib/x.so"],
  ];
  for (const [permission, requested, value] of cases) {
    await t.step(permission, () => {
      const result = checkGrant(requested, { modulePath: MODULE });
      assert.equal(result.ok, false);
      if (!result.ok) {
        assert.equal(result.permission, permission);
        assert.equal(result.value, value);
        assert.equal(
          result.reason,
          `Permission "${permission}" for "${value}" exceeds the host policy`,
        );
      }
    });
  }
});

Deno.test("checkGrant() allows what the policy allows", () => {
  const result = checkGrant({
    read: ["/data/in"],
    write: ["/tmp/work/out"],
    net: ["api.example.com:443", "other.io"],
    env: ["TOKEN"],
    run: ["git"],
  }, {
    modulePath: MODULE,
    policy: {
      read: ["/data"],
      write: ["/tmp/work"],
      net: ["api.example.com", "other.io"],
      env: ["*"],
      run: ["git"],
    },
  });
  assert.deepEqual(result, {
    ok: true,
    grant: {
      read: ["/data/in", "/skills/fs"],
      write: ["/tmp/work/out"],
      net: ["api.example.com:443", "other.io"],
      env: ["TOKEN"],
      run: ["git"],
    },
  });
});

Deno.test("checkGrant() refuses denied paths and their parents, even when allowed", () => {
  const policy = { read: ["/"], deny: ["/host/src"] };
  for (const path of ["/host/src/runtime", "/host", "/"]) {
    const result = checkGrant({ read: [path] }, { modulePath: MODULE, policy });
    assert.equal(result.ok, false, path);
  }
  const moduleInHost = checkGrant({}, {
    modulePath: "/host/src/mod.ts",
    policy,
  });
  assert.equal(moduleInHost.ok, false);
});

Deno.test("checkGrant() refuses a port-less host when only a port is allowed", () => {
  const policy = { net: ["api.example.com:443"] };
  assert.equal(
    checkGrant({ net: ["api.example.com"] }, { modulePath: MODULE, policy }).ok,
    false,
  );
  assert.equal(
    checkGrant({ net: ["api.example.com:443"] }, { modulePath: MODULE, policy })
      .ok,
    true,
  );
});

Deno.test("checkGrant() refuses entries with commas (flag injection)", () => {
  const result = checkGrant({ read: ["/skills/fs/a,/etc"] }, {
    modulePath: MODULE,
  });
  assert.equal(result.ok, false);
});

Deno.test("ownReadPaths() gives a module in a shared folder only its files", () => {
  const policy = { sharedFolders: ["/skills"] };
  assert.deepEqual(
    ownReadPaths("/skills/add.ts", {
      policy,
      localFiles: ["/skills/add.ts", "/skills/_util.ts"],
    }),
    ["/skills/add.ts", "/skills/_util.ts"],
  );
  assert.deepEqual(ownReadPaths("/skills/fs/mod.ts", { policy }), [
    "/skills/fs",
  ]);
});

Deno.test("resolvePermissionPaths() resolves paths relative to the module folder", () => {
  assert.deepEqual(
    resolvePermissionPaths({
      read: ["data", "../shared", "/abs"],
      write: ["./out"],
      run: ["git", "./bin/tool"],
      net: ["x.io"],
    }, "/skills/fs"),
    {
      read: ["/skills/fs/data", "/skills/shared", "/abs"],
      write: ["/skills/fs/out"],
      run: ["git", "/skills/fs/bin/tool"],
      net: ["x.io"],
    },
  );
});

Deno.test("grantToFlags() and grantToWorkerPermissions() map exactly the grant", () => {
  const grant = { read: ["/a"], net: ["x.io:443"], env: ["T"] };
  assert.deepEqual(grantToFlags(grant, ["/host"]), [
    "--allow-read=/a",
    "--allow-net=x.io:443",
    "--allow-env=T",
    "--deny-read=/host",
    "--deny-write=/host",
  ]);
  assert.deepEqual(grantToWorkerPermissions(grant), {
    read: ["/a"],
    write: false,
    net: ["x.io:443"],
    env: ["T"],
    run: false,
    sys: false,
    ffi: false,
    import: false,
  });
  assert.equal(grantKey({ net: ["b", "a"] }), grantKey({ net: ["a", "b"] }));
  assert.notEqual(grantKey({ net: ["a"] }), grantKey({ read: ["a"] }));
});

Deno.test('a "*" in net, env or sys is the unrestricted permission, only when the policy holds it', () => {
  const modulePath = "/s/x/mod.ts";
  // Not granted unless the operator's policy says "*".
  const refused = checkGrant({ net: ["*"] }, {
    modulePath,
    policy: { net: ["api.example"] },
  });
  assert.equal(refused.ok, false);
  const checked = checkGrant({ net: ["*"], sys: ["*"], env: ["*"] }, {
    modulePath,
    policy: { net: ["*"], sys: ["*"], env: ["*"] },
  });
  assert.ok(checked.ok);
  const flags = grantToFlags(checked.grant);
  assert.ok(flags.includes("--allow-net"));
  assert.ok(flags.includes("--allow-sys"));
  assert.ok(flags.includes("--allow-env"));
  assert.ok(!flags.some((f) => f.includes("*")));
  const worker = grantToWorkerPermissions(checked.grant);
  assert.equal(worker.net, true);
  assert.equal(worker.sys, true);
  assert.equal(worker.env, true);
  // Paths never widen: the module's own folder stays a list.
  assert.deepEqual(worker.read, ["/s/x"]);
  // A named host stays a list.
  assert.deepEqual(grantToWorkerPermissions({ net: ["a.example"] }).net, [
    "a.example",
  ]);
});

Deno.test('a "*" net grant starts a real Deno process and worker with the network', async () => {
  const grant = { net: ["*"] };
  const worker = JSON.stringify(grantToWorkerPermissions(grant));
  const code = `
    const state = (await Deno.permissions.query({ name: "net", host: "x.example" })).state;
    const src = 'self.postMessage((await Deno.permissions.query({ name: "net", host: "y.example" })).state)';
    const w = new Worker("data:text/javascript," + encodeURIComponent(src), {
      type: "module", deno: { permissions: { ...${worker}, import: false } },
    });
    const inWorker = await new Promise((ok, no) => {
      w.onmessage = (e) => ok(e.data);
      w.onerror = (e) => { e.preventDefault(); no(new Error(e.message)); };
    });
    w.terminate();
    console.log(state + " " + inWorker);
  `;
  const file = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, code);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        "--no-prompt",
        "--unstable-worker-options",
        `--allow-read=${file}`,
        ...grantToFlags(grant),
        file,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim();
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.success, true, err);
    assert.equal(text, "granted granted");
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("OwnReads gives a file in a shared folder its file and local imports only", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.writeTextFile(join(dir, "lib.ts"), "export const x = 1;\n");
    await Deno.writeTextFile(
      join(dir, "tool.ts"),
      'import { x } from "./lib.ts";\nexport default x;\n',
    );
    await Deno.writeTextFile(join(dir, "other.ts"), "export default 2;\n");
    const own = new OwnReads({ read: [dir], sharedFolders: [dir] });
    const grant = await own.withGrant(join(dir, "tool.ts"), Object.freeze({}));
    assert.deepEqual(
      [...grant.read!].sort(),
      [join(dir, "lib.ts"), join(dir, "tool.ts")].sort(),
    );
    assert.ok(!grant.read!.includes(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("OwnReads grants no import the policy does not let it read", () => {
  // A module in a shared folder whose file now imports what the policy
  // keeps from modules: discovery refuses it, but records its files first,
  // and an earlier version of it may still be served.
  const policy = {
    read: ["/s"],
    deny: ["/s/keys"],
    sharedFolders: ["/s"],
  };
  const own = new OwnReads(policy);
  own.remember("/s/a.ts", [
    "/s/a.ts",
    "/s/lib.ts",
    "/private/secret.ts",
    "/s/keys/key.ts",
  ]);
  const grant = own.withGrant("/s/a.ts", Object.freeze({})) as Permissions;
  assert.deepEqual([...grant.read!].sort(), ["/s/a.ts", "/s/lib.ts"]);
});

Deno.test("OwnReads keeps at most MAX_MODULES modules' files, the oldest going first", async () => {
  // Each module ever described was kept for good: whoever can add and
  // remove files in a served folder grew the host without end.
  const own = new OwnReads({ read: ["/s"], sharedFolders: ["/s"] });
  const max = OwnReads.MAX_MODULES;
  for (let i = 0; i < max; i++) own.remember(`/s/m${i}.ts`, [`/s/m${i}.ts`]);
  // A module in a folder of its own reads that folder: nothing is kept.
  own.remember("/s/x/mod.ts", ["/s/x/mod.ts", "/s/x/lib.ts"]);
  assert.deepEqual(own.grant("/s/m0.ts"), { read: ["/s/m0.ts"] });
  own.remember(`/s/m${max}.ts`, [`/s/m${max}.ts`]);
  assert.deepEqual(own.grant(`/s/m${max}.ts`), { read: [`/s/m${max}.ts`] });
  // Forgotten: its files are read again (here it does not exist).
  const first = own.grant("/s/m0.ts");
  assert.ok(first instanceof Promise);
  await assert.rejects(first, Deno.errors.NotFound);
});

Deno.test("OwnReads merges once per frozen grant and never shares across modules", () => {
  const own = new OwnReads({});
  const grant = Object.freeze({ read: ["/data"] });
  const a = own.withGrant("/s/a/mod.ts", grant);
  assert.equal(own.withGrant("/s/a/mod.ts", grant), a);
  const b = own.withGrant("/s/b/mod.ts", grant);
  assert.deepEqual(b, { read: ["/s/b", "/data"] });
  assert.ok(Object.isFrozen(a));
  assert.throws(() => (a as { read: string[] }).read.push("/"));
});

function counting(answer: () => Promise<Record<string, string[]>>) {
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    resolvePermissions() {
      calls++;
      return answer();
    },
  };
}

const kit = {
  path: "/s/kit/mod.ts",
  export: "default",
  hash: "k1",
  permissions: "dynamic" as const,
};
const tool = {
  path: "/s/kit/tool.ts",
  export: "default",
  hash: "t1",
  permissions: { net: ["a.io"] },
};

Deno.test("GrantCache merges a tool's and its toolkit's grant, once per configuration", async () => {
  const sandbox = counting(() => Promise.resolve({ read: ["data"] }));
  const grants = new GrantCache(sandbox, { net: ["a.io"], read: ["/s"] });
  const first = await grants.of(tool, kit, { root: "x" });
  assert.ok(first.ok);
  assert.deepEqual(first.grant.net, ["a.io"]);
  assert.ok(first.grant.read!.includes("/s/kit/data"));
  assert.equal(await grants.of(tool, kit, { root: "x" }), first);
  assert.equal(sandbox.calls, 1);
  await grants.of(tool, kit, { root: "y" });
  assert.equal(sandbox.calls, 2);
  assert.throws(() => (first.grant.net as string[]).push("evil.io"));
});

Deno.test("GrantCache refuses what the policy does not allow and retries failures", async () => {
  let fail = true;
  const sandbox = counting(() =>
    fail ? Promise.reject(new Error("boom")) : Promise.resolve({})
  );
  const grants = new GrantCache(sandbox, {});
  await assert.rejects(Promise.resolve(grants.of(tool, kit, {})), /boom/);
  fail = false;
  const check = await grants.of(tool, kit, {});
  assert.equal(check.ok, false);
  if (!check.ok) assert.equal(check.permission, "net");
  assert.equal(sandbox.calls, 2);
});

Deno.test("GrantCache evaluates a toolkit's dynamic permissions once for all its tools", async () => {
  const sandbox = counting(() => Promise.resolve({ read: ["data"] }));
  const grants = new GrantCache(sandbox, { net: ["a.io"], read: ["/s"] });
  const other = { ...tool, path: "/s/kit/other.ts", hash: "t2" };
  const a = await grants.of(tool, kit, { root: "x" });
  const b = await grants.of(other, kit, { root: "x" });
  assert.ok(a.ok && b.ok);
  assert.notEqual(a, b);
  assert.equal(sandbox.calls, 1);
});
