import assert from "node:assert/strict";
import { tool } from "../../protocol/tool.ts";
import type { Origin } from "../registry/types.ts";
import { type ListedTool, listTools, matchesFilter } from "./filter.ts";

interface RegistryEntry extends ListedTool {
  path: string;
}

function entry(
  name: string,
  origin: Origin,
  opts: { tags?: string[]; toolkit?: string; deferred?: boolean } = {},
): RegistryEntry {
  return {
    ...tool({
      name,
      description: `${name} tool`,
      tags: opts.tags ?? [],
      toolkit: opts.toolkit ?? null,
      deferLoading: opts.deferred ?? false,
    }),
    origin,
    path: `/skills/${name}.ts`,
  };
}

const ENTRIES: RegistryEntry[] = [
  entry("write_file", "builtin", {
    tags: ["files", "write"],
    toolkit: "filesystem",
  }),
  entry("read_file", "builtin", {
    tags: ["files", "read"],
    toolkit: "filesystem",
  }),
  entry("http_request", "builtin", { tags: ["net"], toolkit: "http" }),
  entry("read_csv", "file", { tags: ["files", "read", "csv"] }),
  entry("github_search", "mcp", { tags: ["git", "read"], toolkit: "github" }),
  entry("bulk_export", "file", { tags: ["files", "read"], deferred: true }),
];

function names(list: ListedTool[]): string[] {
  return list.map((e) => e.name);
}

Deno.test("listTools() returns non-deferred tools sorted by name", () => {
  assert.deepEqual(names(listTools(ENTRIES)), [
    "github_search",
    "http_request",
    "read_csv",
    "read_file",
    "write_file",
  ]);
  // Input order does not matter.
  assert.deepEqual(
    names(listTools([...ENTRIES].reverse())),
    names(listTools(ENTRIES)),
  );
});

Deno.test("listTools() includes deferred tools only when asked", () => {
  assert.ok(
    names(listTools(ENTRIES, { includeDeferred: true })).includes(
      "bulk_export",
    ),
  );
  assert.ok(!names(listTools(ENTRIES)).includes("bulk_export"));
});

Deno.test("listTools() applies filter_tags with AND semantics", async (t) => {
  await t.step("one tag", () => {
    assert.deepEqual(names(listTools(ENTRIES, { filterTags: ["read"] })), [
      "github_search",
      "read_csv",
      "read_file",
    ]);
  });
  await t.step("two tags must both be present", () => {
    assert.deepEqual(
      names(listTools(ENTRIES, { filterTags: ["files", "read"] })),
      ["read_csv", "read_file"],
    );
    assert.deepEqual(
      names(listTools(ENTRIES, { filterTags: ["files", "READ", "csv"] })),
      ["read_csv"],
    );
  });
  await t.step("an unknown tag matches nothing", () => {
    assert.deepEqual(listTools(ENTRIES, { filterTags: ["read", "nope"] }), []);
  });
});

Deno.test("listTools() applies filter_kind to origins and toolkit names", async (t) => {
  await t.step("origins", () => {
    assert.deepEqual(names(listTools(ENTRIES, { filterKind: "builtin" })), [
      "http_request",
      "read_file",
      "write_file",
    ]);
    assert.deepEqual(names(listTools(ENTRIES, { filterKind: "file" })), [
      "read_csv",
    ]);
    assert.deepEqual(names(listTools(ENTRIES, { filterKind: "mcp" })), [
      "github_search",
    ]);
  });
  await t.step("toolkit names", () => {
    assert.deepEqual(names(listTools(ENTRIES, { filterKind: "filesystem" })), [
      "read_file",
      "write_file",
    ]);
    assert.deepEqual(listTools(ENTRIES, { filterKind: "nope" }), []);
  });
  await t.step("kind and tags combine", () => {
    assert.deepEqual(
      names(
        listTools(ENTRIES, { filterKind: "builtin", filterTags: ["read"] }),
      ),
      ["read_file"],
    );
  });
});

Deno.test("listTools() returns the caller's own entry objects", () => {
  const [first] = listTools(ENTRIES, { filterKind: "file" });
  assert.equal(first?.path, "/skills/read_csv.ts");
  assert.ok(ENTRIES.includes(first as RegistryEntry));
});

Deno.test("listTools() sorts in code-unit order, not locale order", () => {
  const list = [
    entry("b", "file"),
    entry("a", "file"),
    entry("B", "file"),
    entry("é", "file"),
  ];
  assert.deepEqual(names(listTools(list)), ["B", "a", "b", "é"]);
});

Deno.test("matchesFilter() reads the tool's tags and kind", () => {
  const e = entry("x", "mcp", { tags: ["A"], toolkit: "kit" });
  assert.equal(matchesFilter(e, { filterTags: ["a"] }), true);
  assert.equal(matchesFilter(e, { filterTags: ["a", "b"] }), false);
  assert.equal(matchesFilter(e, { filterKind: "kit" }), true);
  assert.equal(matchesFilter(e, { filterKind: "mcp" }), true);
  assert.equal(matchesFilter(e, { filterKind: "file" }), false);
});
