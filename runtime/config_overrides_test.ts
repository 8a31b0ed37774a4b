import assert from "node:assert/strict";
import { parsePort, resolveConfig } from "./config_overrides.ts";
import { defaultConfig } from "./config.ts";
import { ConfigError } from "./config_error.ts";

Deno.test("resolveConfig() leaves the config alone when nothing is given", () => {
  const config = defaultConfig();
  const resolved = resolveConfig(config, {});
  assert.deepEqual(resolved.config, config);
  assert.notEqual(resolved.config, config);
  assert.deepEqual(resolved.overrides, {});
});

Deno.test("resolveConfig() ignores empty flag lists and empty variables", () => {
  const config = { ...defaultConfig(), tokens: ["file"] };
  const { config: out, overrides } = resolveConfig(config, {
    env: { SKILLBOX_TOKENS: "", SKILLBOX_HOSTNAME: "" },
    flags: { skills: [], tokens: [] },
  });
  assert.deepEqual(out.tokens, ["file"]);
  assert.deepEqual(out.skills, ["./skills"]);
  assert.deepEqual(overrides, {});
});

Deno.test("resolveConfig() lets flags replace the lists and says so", () => {
  const { config, overrides } = resolveConfig(defaultConfig(), {
    env: { SKILLBOX_TOKENS: "env-token" },
    flags: { skills: ["./a", "./b"], tokens: ["flag-token"], hostname: "::1" },
  });
  assert.deepEqual(config.skills, ["./a", "./b"]);
  assert.deepEqual(config.tokens, ["flag-token"]);
  assert.equal(config.listen.hostname, "::1");
  assert.deepEqual(overrides, {
    skills: "--skills",
    tokens: "--token",
    "listen.hostname": "--hostname",
  });
});

Deno.test("parsePort() takes only whole numbers from 0 to 65535", () => {
  assert.equal(parsePort("0", "x"), 0);
  assert.equal(parsePort("65535", "x"), 65535);
  for (const bad of ["65536", "-1", "80.5", " 80", "0x50", ""]) {
    assert.throws(
      () => parsePort(bad, "SKILLBOX_PORT"),
      (e: unknown) =>
        e instanceof ConfigError && e.message.includes(`"${bad}"`),
      bad,
    );
  }
});

Deno.test("resolveConfig() keeps the file's tokens when SKILLBOX_TOKENS names none", () => {
  // A variable of only commas or spaces (an unset secret in a template) once
  // replaced the tokens with none, and the host served without auth.
  const config = { ...defaultConfig(), tokens: ["file"] };
  for (const value of [",", " ", " , "]) {
    const { config: out, overrides } = resolveConfig(config, {
      env: { SKILLBOX_TOKENS: value },
    });
    assert.deepEqual(out.tokens, ["file"]);
    assert.deepEqual(overrides, {});
  }
});
