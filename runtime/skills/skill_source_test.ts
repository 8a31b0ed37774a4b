import assert from "node:assert/strict";
import { skillSource } from "./skill_source.ts";

Deno.test("skillSource() tells system, user and project apart", async (t) => {
  await t.step("builtin is system wherever it is", () => {
    assert.equal(
      skillSource("/home/ann/x.ts", { origin: "builtin", home: "/home/ann" }),
      "system",
    );
  });
  await t.step("under the home directory is user", () => {
    assert.equal(
      skillSource("/home/ann/.skillbox/skills/a", {
        origin: "file",
        home: "/home/ann",
      }),
      "user",
    );
  });
  await t.step(
    "the home directory itself, a sibling and an escape are project",
    () => {
      for (
        const path of [
          "/home/ann",
          "/home/anna/s/a.ts",
          "/home/ann/../bob/a.ts",
        ]
      ) {
        assert.equal(
          skillSource(path, { origin: "file", home: "/home/ann" }),
          "project",
          path,
        );
      }
    },
  );
  await t.step("no home directory: project", () => {
    assert.equal(
      skillSource("/x/a.ts", { origin: "file", home: null }),
      "project",
    );
  });
});
