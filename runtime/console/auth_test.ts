import assert from "node:assert/strict";
import { createConsoleAuth } from "./auth.ts";

Deno.test("labelOf() names the first configured token a value is, and no other", () => {
  const auth = createConsoleAuth(["alpha", "alphabet", "béta", "alpha"]);
  assert.equal(auth.labelOf("alpha"), "token 1");
  assert.equal(auth.labelOf("alphabet"), "token 2");
  assert.equal(auth.labelOf("béta"), "token 3");
  // A prefix, an extension, a letter off, another encoding of é: no token.
  for (const wrong of ["alph", "alphab", "alphaa", "beta", "be\u0301ta", ""]) {
    assert.equal(auth.labelOf(wrong), null, wrong);
  }
  assert.equal(auth.required, true);
  assert.equal(createConsoleAuth([]).required, false);
});
