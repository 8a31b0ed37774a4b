import assert from "node:assert/strict";
import { join } from "node:path";
import {
  discoveryOptions,
  poolOptions,
  poolSettings,
  WORKER_MB,
} from "./pool_options.ts";

Deno.test("pool settings: defaults, the cache folder and policy paths made absolute", () => {
  const settings = poolSettings({
    cwd: "/srv/host",
    cacheDir: "cache",
    policy: { deny: ["/a/./b"], sharedFolders: ["/skills/"] },
  });
  assert.equal(settings.cacheDir, "/srv/host/cache");
  assert.deepEqual(settings.deny, ["/a/b"]);
  assert.deepEqual([...settings.shared], ["/skills"]);
  assert.equal(settings.describeTimeoutMs, 5000);
  assert.equal(settings.processWaitMs, 30_000);
  assert.equal(settings.confinement, "auto");
  const bare = poolSettings({});
  assert.equal(bare.cwd, Deno.cwd());
  assert.equal(bare.cacheDir, join(Deno.cwd(), ".skillbox-cache"));
  assert.deepEqual(bare.policy, {});
  assert.equal(poolSettings({ cacheDir: null }).cacheDir, null);
});

Deno.test("process pool options: the worker budget sets warm workers unless a count is given", () => {
  const budget = { workerBudgetMb: 5 * WORKER_MB + 1 };
  assert.equal(poolOptions(budget, poolSettings(budget)).maxWarmWorkers, 5);
  const tiny = { workerBudgetMb: 1 };
  assert.equal(poolOptions(tiny, poolSettings(tiny)).maxWarmWorkers, 1);
  const both = { workerBudgetMb: 600, maxWarmWorkers: 3 };
  assert.equal(poolOptions(both, poolSettings(both)).maxWarmWorkers, 3);
  const bare = poolOptions({}, poolSettings({}));
  assert.equal(bare.maxWarmWorkers, Math.floor(1024 / WORKER_MB));
  assert.equal(bare.memoryMb, 512);
  assert.equal(bare.maxIdle, 8);
  assert.equal(bare.spareProcesses, 1);
  assert.equal(bare.maxProcesses, 32);
  assert.ok(bare.perPrincipal! >= 1);
  assert.equal(bare.wrapper, undefined);
});

Deno.test("discovery options: denied paths and the denied trees' entries, listed now", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(root, "secret"));
    await Deno.mkdir(join(root, "skills"));
    const options = {
      memoryMb: 64,
      policy: {
        deny: ["/etc/shadow"],
        deniedTrees: [{ root, except: [join(root, "skills")] }],
      },
    };
    const bootstrap = () => Promise.resolve("js");
    const queue = discoveryOptions(
      options,
      poolSettings(options),
      undefined,
      bootstrap,
    );
    assert.equal(queue.memoryMb, 64);
    assert.equal(queue.bootstrap, bootstrap);
    assert.ok(queue.deny.includes("/etc/shadow"));
    assert.ok(queue.deny.includes(join(root, "secret")), queue.deny.join());
    assert.ok(!queue.deny.includes(join(root, "skills")));
    assert.equal(queue.env.NO_COLOR, "1");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
