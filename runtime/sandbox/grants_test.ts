import assert from "node:assert/strict";
import { GrantCache } from "./grants.ts";

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
