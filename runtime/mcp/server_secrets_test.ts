import assert from "node:assert/strict";
import {
  allServerSecrets,
  scrubServer,
  serverSecrets,
} from "./server_secrets.ts";

Deno.test("serverSecrets() takes env and header values, and the credential after a scheme", () => {
  assert.deepEqual(
    serverSecrets({
      env: { A: "alpha-secret", B: "beta" },
      headers: { authorization: "Basic dXNlcjpwYXNz", "x-key": "k-1234" },
    }),
    ["Basic dXNlcjpwYXNz", "alpha-secret", "dXNlcjpwYXNz", "k-1234", "beta"],
  );
});

Deno.test("serverSecrets() leaves out values too short or too common to be credentials", () => {
  assert.deepEqual(
    serverSecrets({
      env: { A: "1", B: "on", C: "true", D: "False", E: "none", F: "  " },
      headers: { "x-a": "yes", "x-b": "Bearer no" },
    }),
    ["Bearer no"],
  );
});

Deno.test("scrubServer() replaces the secrets anywhere in a value, keys included", () => {
  const secrets = serverSecrets({ env: { T: "tok-abcdef" } });
  assert.deepEqual(
    scrubServer({ "tok-abcdef": ["saw tok-abcdef"], n: 1 }, secrets),
    { "[redacted]": ["saw [redacted]"], n: 1 },
  );
  assert.equal(scrubServer("untouched", []), "untouched");
  assert.deepEqual(allServerSecrets(undefined), []);
});
