import assert from "node:assert/strict";
import {
  checkToolPolicy,
  matchesSelector,
  parseHostPolicy,
  type PolicySubject,
  toolStatuses,
} from "./policy.ts";
import { buildSnapshot } from "../registry/snapshot.ts";
import type { DescribedDefinition } from "../sandbox/types.ts";

const tool = (
  name: string,
  fields: Partial<PolicySubject> = {},
): PolicySubject => ({
  name,
  tags: [],
  toolkit: null,
  origin: "file",
  ...fields,
});

Deno.test("matchesSelector() matches names, globs, tags, toolkits and origins", () => {
  const t = tool("http_request", {
    tags: ["network"],
    toolkit: "http",
    origin: "builtin",
  });
  assert.ok(matchesSelector("http_request", t));
  assert.ok(matchesSelector("http_*", t));
  assert.ok(matchesSelector("*", t));
  assert.ok(!matchesSelector("http", t), "a name is matched whole");
  assert.ok(!matchesSelector("http.request", t), "dots are literal");
  assert.ok(matchesSelector("tag:network", t));
  assert.ok(!matchesSelector("tag:net", t));
  assert.ok(matchesSelector("toolkit:http", t));
  assert.ok(!matchesSelector("toolkit:http", tool("x")));
  assert.ok(matchesSelector("origin:builtin", t));
});

Deno.test("checkToolPolicy() applies global and per-token rules", async (t) => {
  const policy = parseHostPolicy({
    tools: {
      allow: ["tag:safe", "toolkit:shell", "toolkit:http"],
      deny: ["toolkit:shell", "delete_*"],
      tokens: {
        admin: { allow: ["toolkit:shell", "delete_*"] },
        ci: { only: ["tag:safe"], deny: ["read_secret"] },
        narrow: { deny: ["tag:safe"] },
      },
    },
  }).tools;
  const safe = tool("read_file", { tags: ["safe"] });
  const shell = tool("run_command", { toolkit: "shell" });
  const del = tool("delete_file", { tags: ["safe"] });
  const secret = tool("read_secret", { tags: ["safe"] });
  const web = tool("http_request", { toolkit: "http" });
  const other = tool("other");
  const cases: [string, PolicySubject, string, boolean, RegExp?][] = [
    ["global allow by tag", safe, "", true],
    ["global deny beats allow", shell, "", false, /rule "toolkit:shell"$/],
    ["global deny by glob", del, "", false, /rule "delete_\*"/],
    ["not in the global allow list", other, "", false, /the allow list$/],
    ["token allow opens a global deny", shell, "admin", true],
    ["token allow opens a glob deny", del, "admin", true],
    ["token without a match falls back to global", safe, "admin", true],
    [
      "token allow list limits the token",
      web,
      "ci",
      false,
      /"only" list for this auth token/,
    ],
    [
      "token deny",
      secret,
      "ci",
      false,
      /rule "read_secret" for this auth token/,
    ],
    [
      "token deny beats global allow",
      safe,
      "narrow",
      false,
      /for this auth token/,
    ],
    ["unknown token uses global rules", shell, "nope", false],
  ];
  for (const [label, subject, token, allowed, reason] of cases) {
    await t.step(label, () => {
      const d = checkToolPolicy(policy, subject, token);
      assert.equal(d.allowed, allowed);
      if (!d.allowed) {
        assert.match(d.reason, new RegExp(`^Tool "${subject.name}" is denied`));
        if (reason) assert.match(d.reason, reason);
        if (token !== "") assert.ok(!d.reason.includes(token));
      }
    });
  }
});

Deno.test("checkToolPolicy() allows everything with an empty policy", () => {
  const policy = parseHostPolicy(undefined).tools;
  assert.ok(checkToolPolicy(policy, tool("x"), "").allowed);
});

Deno.test("parseHostPolicy() maps permissions and rejects unknown fields", () => {
  const p = parseHostPolicy({
    permissions: { net: ["api.example.com"], shared_folders: ["/s"] },
  });
  assert.deepEqual(p.permissions.net, ["api.example.com"]);
  assert.deepEqual(p.permissions.sharedFolders, ["/s"]);
  assert.equal(p.maxTimeoutMs, 300_000);
  assert.throws(
    () => parseHostPolicy({ permissions: { nett: [] } }),
    /Invalid host policy: policy\.permissions/,
  );
  assert.throws(
    () => parseHostPolicy({ tools: { tokens: { t: { allow: [1] } } } }),
    /policy\.tools\.tokens\.t\.allow\.0/,
  );
});

function described(
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
    described("/s/ok.ts", { name: "ok" }),
    described("/s/denied.ts", { name: "denied", fields: { tags: ["net"] } }),
    described("/s/greedy.ts", {
      name: "greedy",
      permissions: { run: ["bash"] },
    }),
    described("/s/kit/toolkit.ts", {
      kind: "toolkit",
      name: "kit",
      permissions: { read: ["/etc"] },
      runnable: false,
    }),
    described("/s/kit/member.ts", { name: "member" }),
    described("/s/dyn/toolkit.ts", {
      kind: "toolkit",
      name: "dyn",
      permissions: "dynamic",
      runnable: false,
    }),
    described("/s/dyn/open.ts", { name: "open" }),
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

Deno.test("parseHostPolicy() refuses a timeout cap longer than a timer can wait", () => {
  // Past 2^31-1 ms Deno fires a timer after 1 ms: a call's deadline then
  // re-armed the sandbox's shared timer every millisecond while it ran.
  assert.throws(() => parseHostPolicy({ max_timeout_seconds: 3e6 }), TypeError);
  assert.equal(
    parseHostPolicy({ max_timeout_seconds: 2_147_483 }).maxTimeoutMs,
    2_147_483_000,
  );
});
