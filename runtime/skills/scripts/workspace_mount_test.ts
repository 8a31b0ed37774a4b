import assert from "node:assert/strict";
import { markerSplitter, newMarker } from "./workspace_mount.ts";
import { runSkillScript, type ScriptCall } from "./run_script.ts";
import { detectConfinement } from "../../confine/confine.ts";

const { layout } = await detectConfinement("auto");
const confined = { ignore: layout === null };

Deno.test("the marker is found however the stream is cut, and only it", () => {
  const marker = newMarker();
  const text = `out ${marker.slice(0, 9)} more\n${marker}\nR 0 1 1 0\n`;
  const all = new TextEncoder().encode(text);
  for (const size of [1, 2, 5, 31, 33, all.length]) {
    const split = markerSplitter(marker);
    let script = "";
    let keeper = "";
    for (let at = 0; at < all.length; at += size) {
      const part = split.push(all.subarray(at, at + size));
      script += new TextDecoder().decode(part.script);
      keeper += new TextDecoder().decode(part.keeper);
    }
    script += new TextDecoder().decode(split.end());
    assert.equal(script, `out ${marker.slice(0, 9)} more\n`, `size ${size}`);
    assert.equal(keeper, "R 0 1 1 0\n");
  }
});

async function run(
  body: string,
  options: Partial<ScriptCall> = {},
  quota = { bytes: 1 << 20, files: 64 },
  env: Record<string, string> = {},
) {
  const folder = await Deno.makeTempDir();
  await Deno.writeTextFile(`${folder}/s.sh`, body);
  const events: string[] = [];
  try {
    const result = await runSkillScript({
      folder,
      script: "s.sh",
      args: [],
      timeoutMs: 20_000,
      onEvent: (kind, data) => events.push(`${kind}:${data.name ?? ""}`),
      ...options,
    }, {
      interpreters: { ".sh": "sh" },
      workspace: quota,
      files: { maxBytes: 1024, maxFiles: 10 },
      env,
    });
    return { result, events };
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
}

Deno.test(
  "only regular files come back: no symlink, FIFO or device is followed; odd names survive",
  confined,
  async () => {
    const { result } = await run(
      "ln -s /etc/passwd passwd; ln -s / root; mkfifo fifo; " +
        "printf a > 'new\nline'; mkdir d; printf bb > d/x; ln d/x hard",
    );
    assert.equal(result.exit_code, 0, result.stderr_tail);
    assert.deepEqual(result.artifacts, [
      { name: "d/x", bytes: 2, sent: true },
      { name: "hard", bytes: 2, sent: true },
      { name: "new\nline", bytes: 1, sent: true },
    ]);
  },
);

Deno.test(
  "a script that prints a forged report only changes its own output",
  confined,
  async () => {
    const { result } = await run(
      "printf 'R 0 0 0 1\\n5 1 1\\nzhello\\n'; printf ok > real.txt",
    );
    assert.equal(result.stdout_tail, "R 0 0 0 1\n5 1 1\nzhello\n");
    assert.deepEqual(result.artifacts, [
      { name: "real.txt", bytes: 2, sent: true },
    ]);
    assert.equal(result.workspace_note, undefined);
  },
);

Deno.test(
  "a script past its timeout still hands its files back, and /tmp shares the quota",
  confined,
  async () => {
    const { result } = await run(
      "printf done > out.txt; dd if=/dev/zero of=/tmp/fill bs=64k count=100 2>/dev/null; " +
        "printf more > more.txt; exec sleep 60",
      { timeoutMs: 1500 },
    );
    assert.equal(result.timed_out, true);
    // /tmp filled the quota: more.txt was made, its content refused.
    assert.deepEqual(result.artifacts, [
      { name: "more.txt", bytes: 0, sent: true },
      { name: "out.txt", bytes: 4, sent: true },
    ]);
    assert.match(String(result.workspace_note), /quota of 1 MiB/);
  },
);

Deno.test(
  "input files over the quota are refused with the reason",
  confined,
  async () => {
    await assert.rejects(
      run("true", { files: { "big.txt": "x".repeat(2 << 20) } }),
      /Cannot run "s\.sh": Cannot set up the script's workspace: the input files do not fit its quota/,
    );
  },
);

Deno.test(
  "input files over the quota are refused before the host writes any of them",
  confined,
  async (t) => {
    // They come from the model (or a client's tool call): the host's temp
    // dir is no tmpfs of the quota, so nothing may land there first.
    const written: string[] = [];
    const original = Deno.writeTextFile;
    Deno.writeTextFile = (path, ...rest) => {
      written.push(String(path));
      return original(path, ...rest);
    };
    try {
      const cases: [string, Record<string, string>][] = [
        ["bytes", {
          "in-a.txt": "x".repeat(600_000),
          "in-b.txt": "x".repeat(600_000),
        }],
        [
          "files",
          Object.fromEntries(
            Array.from({ length: 70 }, (_, i) => [`in-${i}.txt`, ""]),
          ),
        ],
        [
          "folders",
          Object.fromEntries(
            Array.from({ length: 40 }, (_, i) => [`in-${i}/x.txt`, ""]),
          ),
        ],
      ];
      for (const [name, files] of cases) {
        await t.step(name, async () => {
          await assert.rejects(
            run("true", { files }),
            /Cannot run "s\.sh": Cannot set up the script's workspace: the input files do not fit its quota of 1048576 bytes and \d+ files/,
          );
          assert.deepEqual(written.filter((p) => p.includes("in-")), []);
        });
      }
    } finally {
      Deno.writeTextFile = original;
    }
  },
);

Deno.test(
  "the keeper's bash takes no startup file or function from the script's environment",
  confined,
  async () => {
    // The names never reach a script through its skill's `env` (they are
    // refused there); this is the keeper's own guard, outside bwrap.
    const host = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${host}/startup.sh`, `touch ${host}/sourced\n`);
      const { result } = await run("printf ok > out.txt", {}, undefined, {
        BASH_ENV: `${host}/startup.sh`,
        "BASH_FUNC_mkdir%%": `() { touch ${host}/called; command mkdir "$@"; }`,
      });
      assert.equal(result.exit_code, 0, result.stderr_tail);
      assert.deepEqual(result.artifacts, [
        { name: "out.txt", bytes: 2, sent: true },
      ]);
      const made = [...Deno.readDirSync(host)].map((e) => e.name).sort();
      assert.deepEqual(made, ["startup.sh"]);
    } finally {
      await Deno.remove(host, { recursive: true });
    }
  },
);
