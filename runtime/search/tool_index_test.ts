import assert from "node:assert/strict";
import {
  parametersToSchema,
  tool as domainTool,
  type ToolParameter,
} from "../../protocol/tool.ts";
import type { Origin } from "../registry/types.ts";
import type { ListedTool } from "../tools/filter.ts";
import { ToolIndex } from "./tool_index.ts";

interface Entry extends ListedTool {
  revision: number;
}

function tool(
  name: string,
  description: string,
  opts: {
    tags?: string[];
    toolkit?: string;
    deferred?: boolean;
    origin?: Origin;
    params?: ToolParameter[];
    revision?: number;
  } = {},
): Entry {
  return {
    ...domainTool({
      name,
      description,
      tags: opts.tags ?? [],
      toolkit: opts.toolkit ?? null,
      deferLoading: opts.deferred ?? false,
      inputSchema: parametersToSchema(opts.params ?? []),
    }),
    origin: opts.origin ?? "file",
    revision: opts.revision ?? 1,
  };
}

function param(name: string, description: string): ToolParameter {
  return {
    name,
    type: "string",
    description,
    required: false,
    enum: null,
    properties: null,
  };
}

const TOOLS: Entry[] = [
  tool("write_file", "Write text to a file, creating or overwriting it.", {
    tags: ["files", "write"],
    toolkit: "filesystem",
    origin: "builtin",
  }),
  tool("read_file", "Read a text file and return its contents.", {
    tags: ["files", "read"],
    toolkit: "filesystem",
    origin: "builtin",
  }),
  tool("read_csv", "Parse a CSV file into rows.", {
    tags: ["data", "csv", "read"],
  }),
  tool("http_request", "Send an HTTP request to a URL.", {
    tags: ["net"],
    toolkit: "http",
    origin: "builtin",
  }),
  tool("sentry_list_errors", "List frequent unresolved exceptions.", {
    tags: ["monitoring"],
    origin: "mcp",
    params: [param("project", "Sentry project slug")],
  }),
  tool("archive_everything", "Export every table of the warehouse to CSV.", {
    tags: ["data", "csv"],
    deferred: true,
  }),
];

function names(hits: { entry: ListedTool }[]): string[] {
  return hits.map((h) => h.entry.name);
}

Deno.test("ToolIndex.search() matches names in any case convention", () => {
  const index = new ToolIndex(TOOLS);
  for (const q of ["read_csv", "read csv", "readCsv", "READ-CSV"]) {
    assert.equal(names(index.search(q))[0], "read_csv", q);
  }
});

Deno.test("ToolIndex.search() ranks best first and scores decrease", () => {
  const hits = new ToolIndex(TOOLS).search("read a csv file");
  assert.equal(names(hits)[0], "read_csv");
  assert.ok(
    names(hits).indexOf("read_csv") < names(hits).indexOf("write_file"),
  );
  for (let i = 1; i < hits.length; i++) {
    assert.ok((hits[i - 1]?.score ?? 0) >= (hits[i]?.score ?? 0));
  }
});

Deno.test("ToolIndex.search() searches parameter descriptions", () => {
  assert.deepEqual(names(new ToolIndex(TOOLS).search("slug")), [
    "sentry_list_errors",
  ]);
});

Deno.test("ToolIndex.search() forgives a typo and completes a prefix", () => {
  const index = new ToolIndex(TOOLS);
  assert.equal(names(index.search("exceptons"))[0], "sentry_list_errors");
  assert.equal(names(index.search("unresol"))[0], "sentry_list_errors");
});

Deno.test("ToolIndex.search() includes deferred tools only when asked", () => {
  const index = new ToolIndex(TOOLS);
  assert.ok(
    !names(index.search("warehouse csv")).includes("archive_everything"),
  );
  assert.equal(
    names(index.search("warehouse csv", { includeDeferred: true }))[0],
    "archive_everything",
  );
});

Deno.test("ToolIndex.search() applies tag and kind filters", async (t) => {
  const index = new ToolIndex(TOOLS);
  await t.step("tags (AND)", () => {
    assert.deepEqual(
      names(index.search("file", { filterTags: ["files", "write"] })),
      [
        "write_file",
      ],
    );
    assert.deepEqual(
      index.search("file", { filterTags: ["files", "net"] }),
      [],
    );
  });
  await t.step("kind as origin or toolkit", () => {
    assert.deepEqual(names(index.search("file csv", { filterKind: "file" })), [
      "read_csv",
    ]);
    assert.deepEqual(
      names(index.search("file", { filterKind: "filesystem" })).sort(),
      ["read_file", "write_file"],
    );
    assert.deepEqual(names(index.search("exceptions", { filterKind: "mcp" })), [
      "sentry_list_errors",
    ]);
  });
  await t.step("limit", () => {
    assert.equal(index.search("file", { limit: 1 }).length, 1);
  });
});

Deno.test("ToolIndex.search() finds nothing for an empty or stop-word query", () => {
  const index = new ToolIndex(TOOLS);
  assert.deepEqual(index.search(""), []);
  assert.deepEqual(index.search("the a of"), []);
  assert.deepEqual(index.search("zzzzqqq"), []);
});

Deno.test("ToolIndex updates incrementally", async (t) => {
  const index = new ToolIndex<Entry>();
  await t.step("replace adds each tool", () => {
    for (const entry of TOOLS) index.replace(entry);
    for (const { name } of TOOLS) {
      const found = index.search(name, { includeDeferred: true });
      assert.ok(names(found).includes(name), name);
    }
  });
  await t.step("replace updates the indexed text and the entry", () => {
    index.replace(
      tool("read_csv", "Load a spreadsheet of tab separated values.", {
        revision: 2,
      }),
    );
    const hits = index.search("read_csv", { includeDeferred: true });
    assert.equal(hits.filter((h) => h.entry.name === "read_csv").length, 1);
    assert.equal(hits[0]?.entry.revision, 2);
    assert.ok(!names(index.search("parse rows")).includes("read_csv"));
    assert.equal(names(index.search("tab separated"))[0], "read_csv");
  });
  await t.step("replace adds a missing tool", () => {
    index.replace(tool("ocr_image", "Extract text from a scanned image."));
    assert.equal(names(index.search("scanned"))[0], "ocr_image");
  });
  await t.step("remove", () => {
    assert.equal(index.remove("ocr_image"), true);
    assert.equal(index.remove("ocr_image"), false);
    assert.deepEqual(index.search("scanned"), []);
  });
  await t.step("a removed name can be added again", () => {
    index.replace(tool("ocr_image", "Read text in photos."));
    assert.equal(names(index.search("photos"))[0], "ocr_image");
  });
});

Deno.test("ToolIndex refuses duplicate names at construction", () => {
  assert.throws(
    () => new ToolIndex([tool("a", "x"), tool("a", "y")]),
    RangeError,
  );
});

Deno.test("ToolIndex.search() breaks score ties by name", () => {
  const index = new ToolIndex([
    tool("zeta", "Same words"),
    tool("alpha", "Same words"),
  ]);
  assert.deepEqual(names(index.search("same words")), ["alpha", "zeta"]);
});

Deno.test("ToolIndex.search() reads only the first 32 words of a query", () => {
  // Each word is a prefix and fuzzy lookup over the whole index: a 4 MB
  // query of distinct words held the event loop for half a second, and
  // `tool/list/req` runs in no call slot and under no rate quota.
  const index = new ToolIndex([tool("weather", "Gets the forecast")]);
  const filler = Array.from({ length: 32 }, (_, i) => `qx${i}word`).join(" ");
  assert.equal(index.search(`forecast ${filler}`).length, 1);
  assert.equal(index.search(`${filler} forecast`).length, 0);
});
