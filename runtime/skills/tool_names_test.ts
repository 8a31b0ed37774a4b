import assert from "node:assert/strict";
import {
  commandRefusal,
  mapToolNames,
  parseCommandPattern,
  splitToolList,
} from "./tool_names.ts";

Deno.test("mapToolNames() maps every other-runtime name the issue lists", () => {
  const m = mapToolNames([
    "Read",
    "Glob",
    "Grep",
    "Bash",
    "Write",
    "Edit",
    "WebFetch",
  ]);
  assert.deepEqual(m.tools, [
    "read_file",
    "find_files",
    "grep",
    "run_command",
    "write_file",
    "http_request",
  ]);
  assert.deepEqual(m.mapped.Edit, ["read_file", "write_file"]);
  assert.deepEqual(m.unknown, []);
  assert.equal(m.commandRules, null);
});

Deno.test("mapToolNames() keeps skillbox names and grants nothing for unknown ones", () => {
  const m = mapToolNames([
    "read_file",
    "my_tool",
    "WebSearch",
    "Task",
    "mcp__github__create_issue",
    "Read(./docs/**)",
    "WebFetch(domain:example.com)",
    "hasOwnProperty",
    "Read",
  ]);
  assert.deepEqual(m.tools, ["read_file", "my_tool"]);
  assert.deepEqual(m.mapped, { Read: ["read_file"] });
  assert.deepEqual(m.unknown, [
    "WebSearch",
    "Task",
    "mcp__github__create_issue",
    "Read(./docs/**)",
    "WebFetch(domain:example.com)",
    "hasOwnProperty",
  ]);
});

Deno.test("mapToolNames() narrows run_command only when nothing grants it whole", async (t) => {
  await t.step("patterns only: narrowed", () => {
    const m = mapToolNames(["Bash(git:*)", "Bash(npm run test)"]);
    assert.deepEqual(m.tools, ["run_command"]);
    assert.deepEqual(m.commandRules, [
      { words: ["git"], prefix: true },
      { words: ["npm", "run", "test"], prefix: false },
    ]);
  });
  for (const whole of ["Bash", "run_command", "Bash(*)"]) {
    await t.step(`a pattern and ${whole}: not narrowed`, () => {
      assert.equal(mapToolNames(["Bash(git:*)", whole]).commandRules, null);
    });
  }
  await t.step(
    "only patterns skillbox cannot enforce: rules left empty",
    () => {
      const m = mapToolNames(["Bash(rm -rf /tmp/*)", "Bash(echo $HOME)"]);
      assert.deepEqual(m.tools, []);
      assert.deepEqual(m.unknown, ["Bash(rm -rf /tmp/*)", "Bash(echo $HOME)"]);
      assert.equal(m.commandRules, null);
    },
  );
});

Deno.test("parseCommandPattern() reads prefix and exact forms and refuses shell syntax", () => {
  assert.deepEqual(parseCommandPattern("git:*"), {
    words: ["git"],
    prefix: true,
  });
  assert.deepEqual(parseCommandPattern("git log *"), {
    words: ["git", "log"],
    prefix: true,
  });
  assert.deepEqual(parseCommandPattern(" ls "), {
    words: ["ls"],
    prefix: false,
  });
  for (const bad of ["git*", "git; rm", "a | b", "`x`", "ls 'a b'", ":*"]) {
    assert.equal(parseCommandPattern(bad), undefined, bad);
  }
});

Deno.test("commandRefusal() allows the program as written and the leading arguments", () => {
  const rules = [
    { words: ["git"], prefix: true },
    { words: ["npm", "run", "test"], prefix: false },
  ];
  const ok = (command: unknown, args?: unknown) =>
    commandRefusal(rules, { command, args }) === null;
  assert.ok(ok("git"));
  assert.ok(ok("git", ["log", "--oneline"]));
  assert.ok(ok("npm", ["run", "test"]));
  assert.ok(!ok("npm", ["run", "test", "--", "x"]));
  assert.ok(!ok("npm", ["run", "build"]));
  assert.ok(!ok("/usr/bin/git", ["log"]));
  assert.ok(!ok("gitk"));
  assert.ok(!ok("sh", ["-c", "git log"]));
  assert.ok(!ok(["git"]));
  assert.match(
    commandRefusal([], { command: "git" })!,
    /none of its allowed-tools patterns could be enforced/,
  );
});

Deno.test("splitToolList() splits on spaces and commas outside parentheses", () => {
  assert.deepEqual(splitToolList("Read,Grep  Bash(git diff:*),\tWrite"), [
    "Read",
    "Grep",
    "Bash(git diff:*)",
    "Write",
  ]);
  assert.deepEqual(splitToolList(""), []);
});
