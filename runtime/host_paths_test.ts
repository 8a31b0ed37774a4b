import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkGrant } from "./sandbox/grants.ts";
import { deniedTreePaths } from "./sandbox/denied_trees.ts";
import { sandboxPolicy } from "./host_paths.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const SKILLS = join(ROOT, "skills");

Deno.test("sandboxPolicy() denies a folder added to the project root, even if the operator allows the root", async () => {
  const added = await Deno.makeTempDir({ dir: ROOT, prefix: ".new_folder_" });
  try {
    const policy = sandboxPolicy({ read: [ROOT], write: [ROOT] }, {
      served: [SKILLS],
      hostFiles: [],
    });
    const modulePath = join(SKILLS, "echo", "mod.ts");
    for (const kind of ["read", "write"] as const) {
      const check = checkGrant({ [kind]: [join(added, "x")] }, {
        modulePath,
        policy,
      });
      assert.equal(check.ok, false, `${kind} of a new folder is refused`);
      assert.equal(
        checkGrant({ [kind]: [ROOT] }, { modulePath, policy }).ok,
        false,
      );
    }
    assert.ok(
      checkGrant({ read: [join(SKILLS, "echo")] }, {
        modulePath,
        policy,
      }).ok,
    );
    const flags = deniedTreePaths(policy.deniedTrees ?? []);
    assert.ok(flags.includes(added), "the new folder is in the deny flags");
    assert.ok(flags.includes(join(ROOT, "runtime")));
    assert.ok(!flags.some((p) => p === SKILLS || p.startsWith(SKILLS + "/")));
  } finally {
    await Deno.remove(added, { recursive: true });
  }
});

Deno.test("sandboxPolicy() keeps host source denied when the project root itself is served", () => {
  const policy = sandboxPolicy({ read: [ROOT] }, {
    served: [ROOT],
    hostFiles: [],
  });
  const check = checkGrant({ read: [join(ROOT, "runtime")] }, {
    modulePath: join(SKILLS, "echo", "mod.ts"),
    policy,
  });
  assert.equal(check.ok, false);
  assert.deepEqual(deniedTreePaths(policy.deniedTrees ?? []), [ROOT]);
});
