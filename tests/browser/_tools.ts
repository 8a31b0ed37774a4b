/**
 * The "tools" capability the browser test's host serves: `count` streams `n`
 * progress events (seq 0..n-1) and returns `n`; any other name is an
 * `unknown_tool` error, as the standard tools capability answers.
 *
 * @module
 */

import type { Capability } from "../../runtime/capability.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import { encodeEvent } from "../../protocol/responses.ts";
import { tool, toolOutcome } from "../../protocol/tool.ts";

/** The capability: `tool/list/req` and `tool/call/req`. */
export const browserTestTools: Capability = {
  name: "tools",
  handlers: {
    "tool/list/req": () =>
      Promise.resolve({
        tools: [tool({ name: "count", description: "Count to n" })],
      }),
    "tool/call/req": ({ request, session }) => {
      const started = performance.now();
      if (request.toolName !== "count") {
        throw new SkillboxError(
          "unknown_tool",
          `Unknown tool "${request.toolName}"`,
        );
      }
      const n = Number(request.arguments.n ?? 0);
      for (let seq = 0; seq < n; seq++) {
        session.send(encodeEvent("tool/event", request.id, {
          kind: "progress",
          data: { pct: ((seq + 1) / n) * 100, message: `at ${seq + 1}` },
          seq,
        }));
      }
      return Promise.resolve({
        result: toolOutcome({
          success: true,
          toolName: "count",
          data: n,
          durationMs: Math.round(performance.now() - started),
        }),
      });
    },
  },
};
