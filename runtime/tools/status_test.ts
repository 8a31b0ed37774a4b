import assert from "node:assert/strict";
import { buildSnapshot } from "../registry/normalize.ts";
import type { DescribedDefinition } from "../sandbox/types.ts";
import { parseHostPolicy } from "./policy.ts";
import { toolStatuses } from "./status.ts";

function tool(
  path: string,
  def: Partial<DescribedDefinition>,
) {
  return {
    origin: "file" as const,
    root: "/s",
    module: {
      path,
      hash: "h",
      error: null,
      definitions: [{
        export: "default",
        kind: "tool" as const,
        name: "x",
        fields: {},
        permissions: {},
        runnable: true,
        ...def,
      }],
    },
  };
}

Deno.test("toolStatuses() blocks what the policy denies or the cap refuses, with why", () => {
  const snapshot = buildSnapshot([
    tool("/s/ok.ts", { name: "ok" }),
    tool("/s/denied.ts", { name: "denied", fields: { tags: ["net"] } }),
    tool("/s/greedy.ts", { name: "greedy", permissions: { run: ["bash"] } }),
    tool("/s/kit/toolkit.ts", {
      kind: "toolkit",
      name: "kit",
      permissions: { read: ["/etc"] },
      runnable: false,
    }),
    tool("/s/kit/member.ts", { name: "member" }),
    tool("/s/dyn/toolkit.ts", {
      kind: "toolkit",
      name: "dyn",
      permissions: "dynamic",
      runnable: false,
    }),
    tool("/s/dyn/open.ts", { name: "open" }),
  ]);
  const policy = parseHostPolicy({
    tools: { deny: ["tag:net"] },
    permissions: { read: ["/data"] },
  });
  const byName = Object.fromEntries(
    toolStatuses(snapshot, policy).map((t) => [t.name, t]),
  );
  assert.deepEqual(Object.keys(byName), [
    "denied",
    "greedy",
    "member",
    "ok",
    "open",
  ]);
  assert.equal(byName.ok?.status, "available");
  assert.equal(byName.ok?.blockedReason, null);
  assert.equal(
    byName.denied?.blockedReason,
    'Tool "denied" is denied by the host policy: rule "tag:net"',
  );
  assert.equal(byName.greedy?.status, "blocked");
  assert.match(
    byName.greedy?.blockedReason ?? "",
    /^Tool "greedy" asks for more/,
  );
  // The toolkit's static permissions count: its tools ask for them too.
  assert.equal(byName.member?.status, "blocked");
  assert.match(byName.member?.blockedReason ?? "", /\/etc/);
  // Permissions from configuration are checked per call, not here.
  assert.equal(byName.open?.status, "available");
});
