/**
 * The shell toolkit: runs allow-listed programs with arguments, without a
 * shell in between.
 *
 * @module
 */

import type { ToolkitDef } from "../../sandbox/sdk/types.ts";

export default {
  kind: "toolkit",
  name: "shell",
  alias: "Shell",
  category: "system",
  description:
    "Run allow-listed command-line programs (git, ls, python, ...) in a working directory and get their exit code and output. Configure `allowed_commands` and `cwd`.",
  tags: ["shell", "command", "process"],
  config: {
    type: "object",
    properties: {
      allowed_commands: {
        type: "array",
        items: { type: "string" },
        description:
          'Programs that may run: names looked up on PATH ("git") or absolute paths ("/usr/bin/git")',
      },
      cwd: {
        type: "string",
        description:
          "Absolute working directory for commands (default: the sandbox's current directory)",
      },
      env: {
        type: "object",
        additionalProperties: { type: "string" },
        // Environment values are often tokens; never echo them.
        secret: true,
        description:
          "Environment variables for commands; the sandbox's own environment is never passed on. PATH defaults to the standard system directories",
      },
      max_output_bytes: {
        type: "integer",
        minimum: 1024,
        default: 100_000,
        description: "Most bytes of stdout and of stderr kept in the result",
      },
    },
    required: ["allowed_commands"],
    additionalProperties: false,
  },
  permissions: (c) => {
    const run = Array.isArray(c.allowed_commands)
      ? c.allowed_commands.filter((x): x is string => typeof x === "string")
      : [];
    const cwd = typeof c.cwd === "string" && c.cwd !== "" ? [c.cwd] : [];
    return { run, read: cwd, write: cwd };
  },
  prompt: [
    "`run_command` runs one program with an argument array; there is no shell, so pipes (`|`), redirects (`>`), globs (`*`), `&&` and `$VAR` are passed literally as arguments.",
    "- Only the configured `allowed_commands` can run; a refused command's error lists the allowed ones.",
    "- A non-zero `exit_code` is a normal result, not a failure: read `stderr`.",
    "- Output is capped; `stdout_truncated`/`stderr_truncated` say when. Prefer commands that print less (e.g. `git log -n 20`).",
    "- Long-running commands are killed when the call times out.",
  ].join("\n"),
} satisfies ToolkitDef;
