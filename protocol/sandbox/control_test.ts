import assert from "node:assert/strict";
import { controlArg, controlSocketOf } from "./control.ts";

Deno.test("a control socket's argument names its path, read back from any position", () => {
  const args = ["--skillbox-egress-token=ab", controlArg("/tmp/s/c.sock")];
  assert.equal(controlSocketOf(args), "/tmp/s/c.sock");
});

Deno.test("no argument, or one without an absolute path, names no control socket", () => {
  assert.equal(controlSocketOf([]), null);
  assert.equal(controlSocketOf(["--skillbox-control="]), null);
  assert.equal(controlSocketOf(["--skillbox-control=rel.sock"]), null);
});
