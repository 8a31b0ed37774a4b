/**
 * Test helper: runs `eval_typescript` in this process, which the test starts
 * with no permissions at all — as the skillbox sandbox runs this toolkit.
 * Reads cases as JSON from stdin and prints their results as JSON.
 *
 * @module
 */

import { makeCtx } from "./skill_ctx.ts";
import evalTypescript from "../../skills/code/eval_typescript.ts";

interface Case {
  code: string;
  /** Abort the call when the code logs this line. */
  abort_on_log?: string;
}

const cases: Case[] = JSON.parse(
  await new Response(Deno.stdin.readable).text(),
);
const results = [];
for (const c of cases) {
  const ac = new AbortController();
  const t = makeCtx({}, ac.signal);
  const log = t.ctx.log;
  t.ctx.log = (level, message) => {
    log(level, message);
    if (message === c.abort_on_log) ac.abort(new Error("timed out"));
  };
  try {
    const out = await evalTypescript.run({ code: c.code }, t.ctx);
    results.push({ out, logs: t.events });
  } catch (err) {
    results.push({ thrown: String(err) });
  }
}
await Deno.stdout.write(new TextEncoder().encode(JSON.stringify(results)));
