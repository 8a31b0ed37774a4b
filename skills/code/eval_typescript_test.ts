import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dataOf, makeCtx } from "../../tests/support/skill_ctx.ts";
import evalTypescript from "./eval_typescript.ts";

interface Ran {
  out?: { exit_code: number; data: Record<string, unknown> };
  logs?: { kind: string; level: string; message: string }[];
  thrown?: string;
}

/**
 * Runs cases in a child Deno with no permissions and no module downloads,
 * the conditions the sandbox gives this toolkit.
 */
async function runIsolated(
  cases: { code: string; abort_on_log?: string }[],
): Promise<Ran[]> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--no-config",
      "--no-lock",
      "--no-npm",
      "--no-remote",
      fileURLToPath(
        new URL(
          "../../tests/support/eval_typescript_runner.ts",
          import.meta.url,
        ),
      ),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(JSON.stringify(cases)));
  await w.close();
  const { code, stdout, stderr } = await child.output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  return JSON.parse(new TextDecoder().decode(stdout));
}

Deno.test("eval_typescript in a sandbox without permissions", async (t) => {
  const cases = [
    /* 0 */ { code: "1 + 1" },
    /* 1 */ {
      code: [
        "interface Point { x: number; y: number }",
        "enum Axis { X = 1 }",
        "const p: Point = { x: 40, y: 1 };",
        "console.log('point', p);",
        "console.error('oops');",
        "p.x + p.y + (Axis.X as number)",
      ].join("\n"),
    },
    /* 2 */ {
      code: "const r = await Promise.resolve(21);\nconst s: number = r * 2;\ns",
    },
    /* 3 */ {
      code:
        "export const a = 1;\nexport default { sum: [1, 2, 3].reduce((x: number, y: number) => x + y) };",
    },
    /* 4 */ { code: "throw new TypeError('bad input')" },
    /* 5 */ { code: "Deno.readTextFileSync('/etc/hostname')" },
    /* 6 */ { code: "await fetch('https://example.com')" },
    /* 7 */ { code: "return 7" },
    /* 8 */ { code: "new Map([[1, 2]])" },
    /* 9 */ { code: "globalThis.leak = 1; 1" },
    /* 10 */ { code: "typeof globalThis.leak" },
    /* 11 */ {
      code: "console.log('started'); await new Promise(() => {})",
      abort_on_log: "started",
    },
    /* 12 */ { code: "const x: number = ;" },
  ];
  const r = await runIsolated(cases);
  const data = (i: number) => r[i]!.out!.data;

  await t.step("returns the last expression", () => {
    assert.equal(data(0).value, 2);
    assert.equal(r[0]!.out!.exit_code, 0);
  });

  await t.step("strips TypeScript and captures console output", () => {
    assert.equal(data(1).value, 42);
    assert.deepEqual(data(1).console, [
      { level: "log", text: "point { x: 40, y: 1 }" },
      { level: "error", text: "oops" },
    ]);
    const logs = r[1]!.logs!.filter((e) => e.kind === "log");
    assert.deepEqual(logs.map((e) => [e.level, e.message]), [
      ["info", "point { x: 40, y: 1 }"],
      ["error", "oops"],
    ]);
  });

  await t.step("supports top-level await", () => {
    assert.equal(data(2).value, 42);
  });

  await t.step("returns a module's default export", () => {
    assert.deepEqual(data(3).value, { sum: 6 });
  });

  await t.step("reports an exception with exit code 1", () => {
    assert.equal(data(4).error, "TypeError: bad input");
    assert.equal(r[4]!.out!.exit_code, 1);
  });

  await t.step("has no file or network access", () => {
    assert.match(data(5).error as string, /NotCapable|PermissionDenied/);
    assert.match(data(6).error as string, /NotCapable|PermissionDenied/);
  });

  await t.step("accepts a top-level return", () => {
    assert.equal(data(7).value, 7);
  });

  await t.step("displays values that are not JSON", () => {
    assert.equal(data(8).display, "Map(1) { 1 => 2 }");
    assert.equal(data(8).value_type, "Map");
  });

  await t.step("does not keep state between calls", () => {
    assert.equal(data(9).value, 1);
    assert.equal(data(10).value, "undefined");
  });

  await t.step("stops when the call is aborted", () => {
    assert.match(r[11]!.thrown!, /timed out/);
  });

  await t.step("reports a syntax error", () => {
    assert.match(data(12).error as string, /SyntaxError|Expression expected/);
  });
});

Deno.test("eval_typescript never lends the caller's permissions", async () => {
  // This test process holds permissions. With --unstable-worker-options the
  // tool drops them for the evaluated code; without it, it refuses to run.
  try {
    const out = dataOf(
      await evalTypescript.run(
        { code: "Deno.readTextFileSync('/etc/hostname')" },
        makeCtx().ctx,
      ),
    );
    assert.match(out.error as string, /NotCapable/);
  } catch (err) {
    assert.match(String(err), /--unstable-worker-options/);
  }
});

Deno.test("eval_typescript reports an exception that refuses to be text", async () => {
  // Unanswered, the call would wait until its timeout: the late line stands
  // for it.
  const late = "setTimeout(() => console.log('late'), 3000);\n";
  const r = await runIsolated([
    "const e = new Error('x'); e.message = { toString: 1, valueOf: 1 }; throw e",
    "const e = new Error('x'); Object.defineProperty(e, 'name', { get() { throw 1; } }); throw e",
    "throw new Proxy({}, { getPrototypeOf() { throw 1; }, get() { throw 1; }, ownKeys() { throw 1; } })",
  ].map((code) => ({ code: late + code, abort_on_log: "late" })));
  for (const ran of r) {
    assert.equal(ran.thrown, undefined, JSON.stringify(ran));
    assert.equal(ran.out?.exit_code, 1);
    assert.equal(typeof ran.out?.data.error, "string");
  }
});

Deno.test("eval_typescript outside the sandbox answers a value too deep to copy back", async () => {
  // The worker can post a value nested deeper than its parent can copy
  // back: that comes as a messageerror. Unheard, the call waited for its
  // signal. In a child with the worker option (this test process cannot
  // tell it has one: /proc needs --allow-all), so the worker path runs.
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  await Deno.writeTextFile(
    script,
    `import evalTypescript from ${
      JSON.stringify(new URL("./eval_typescript.ts", import.meta.url).href)
    };
import { makeCtx } from ${
      JSON.stringify(
        new URL("../../tests/support/skill_ctx.ts", import.meta.url).href,
      )
    };
const code = "let v: unknown = 1; for (let i = 0; i < 3000; i++) v = { a: v }; v";
// The bound only turns a hang into an answer.
const { ctx } = makeCtx({}, AbortSignal.timeout(60_000));
try {
  await evalTypescript.run({ code }, ctx);
  console.log("answered");
} catch (error) {
  console.log(String(error));
}
`,
  );
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-worker-options", script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(out.stdout).trim();
    assert.match(said, /nested too deep to copy/, said);
  } finally {
    await Deno.remove(script);
  }
});
