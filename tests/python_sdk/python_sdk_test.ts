/**
 * The public A2E Python SDK's own client against a real host: many sessions
 * over HTTP+SSE, then code mode (`code_api`, `run_code`, the nesting
 * refusal). The SDK cannot be installed here (PyPI is unreachable, and its
 * package needs fastmcp, mcp and fastapi), so this runs only when
 * `A2E_PYTHON_SDK` names a checkout of github.com/a2eprotocol/python-sdk
 * and `python3` has `requests` and pydantic 2; `drive.py` says how it loads
 * the SDK's modules unmodified. Elsewhere (CI) it is ignored, saying why, and
 * `tests/support/sse_client.ts` stands in for the SDK.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { codeHost } from "../code/_host.ts";

const SDK = Deno.env.get("A2E_PYTHON_SDK");
const DRIVER = fileURLToPath(new URL("./drive.py", import.meta.url));

Deno.test({
  name: SDK
    ? "the public A2E Python SDK's client calls tools and code mode over HTTP+SSE"
    : "the public A2E Python SDK's client [IGNORED: set A2E_PYTHON_SDK to a checkout of a2eprotocol/python-sdk]",
  ignore: !SDK,
  async fn() {
    await using t = await codeHost({ store: false, policy: {} });
    const run = await new Deno.Command("python3", {
      args: [DRIVER, SDK!, t.url, "20", "10"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(run.stdout).trim();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    const result = JSON.parse(out.split("\n").at(-1)!);
    assert.deepEqual(
      { ok: result.ok, failed: result.failed, errors: result.errors },
      { ok: 200, failed: 0, errors: [] },
    );
    assert.equal(result.code_api_declares_inc, true);
    assert.equal(result.code_api_declares_run_code, false);
    assert.equal(result.run_code_value, 20);
    assert.equal(result.run_code_calls, 20);
    assert.deepEqual(result.run_code_console, ["done"]);
    assert.match(
      String(result.nested_error),
      /Cannot call "run_code" from code run by run_code/,
    );
  },
});
