/**
 * Loading a large `skillbox.jsonc` (up to the 16 MiB the host accepts): the
 * time of each stage — JSONC reading (`runtime/jsonc.ts`), schema
 * validation (`runtime/config_schema.ts`) and the whole `loadConfig` from a
 * file — for files of 1, 4 and 16 MiB of two shapes. Figures are wall time
 * of one run each. Run: `deno task bench config`.
 *
 * @module
 */

import { loadConfig } from "../runtime/config.ts";
import { validateConfig } from "../runtime/config_schema.ts";
import { parseJsonc } from "../runtime/jsonc.ts";
import type { Bench } from "./main.ts";

const MIB = 1024 * 1024;

// A plausible large file: a huge `toolkits` section of nested objects and
// arrays with comments and trailing commas, a huge `mcp_servers` one, a
// long token list and one long string.
function sectionsConfig(mib: number): string {
  const target = mib * MIB;
  const toolkits: string[] = [];
  const servers: string[] = [];
  const tokens: string[] = [];
  let size = 0;
  for (let i = 0; size < target * 0.5; i++) {
    const entry =
      `    // toolkit ${i}\n    "tk${i}": { "root": "/data/${i}", ` +
      `"net": ["a${i}.example.com", "b${i}.example.com"], "nested": ` +
      `{ "deep": { "x": [1, 2, 3, { "y": "${"z".repeat(40)}" }] } }, },\n`;
    toolkits.push(entry);
    size += entry.length;
  }
  for (let i = 0; size < target * 0.8; i++) {
    const entry =
      `    "s${i}": { "command": "node", "args": ["/srv/${i}/index.js", ` +
      `"--flag"], "env": { "A": "b${i}" }, "hosts": ["h${i}.example"] },\n`;
    servers.push(entry);
    size += entry.length;
  }
  for (let i = 0; size < target * 0.95; i++) {
    const entry = `    "token-${i}-${"x".repeat(20)}",\n`;
    tokens.push(entry);
    size += entry.length;
  }
  return `{\n  "listen": { "port": 9000 },\n  "tokens": [\n${
    tokens.join("")
  }  ],\n  "toolkits": {\n${toolkits.join("")}  },\n  "mcp_servers": {\n${
    servers.join("")
  }  },\n  "archived_skills": ["${"q".repeat(target * 0.04)}"],\n}\n`;
}

// Every token an admin token too: each was looked up in the token list.
function adminTokensConfig(mib: number): string {
  const count = Math.floor(mib * MIB / 40);
  const tokens = Array.from({ length: count }, (_, i) => `"token-${i}-abc"`)
    .join(",");
  return `{ "tokens": [${tokens}], "console": { "admin_tokens": [${tokens}] } }`;
}

function seconds(run: () => unknown): string {
  const start = performance.now();
  run();
  return `${((performance.now() - start) / 1000).toFixed(2)} s`;
}

/**
 * Config loading by file size and shape.
 *
 * @example It is registered under this name
 * ```ts
 * import { configBench } from "./config_bench.ts";
 * import assert from "node:assert/strict";
 * assert.equal(configBench.name, "config");
 * ```
 */
export const configBench: Bench = {
  name: "config",
  async run(): Promise<string[]> {
    const lines: string[] = [];
    const path = await Deno.makeTempFile({ suffix: ".jsonc" });
    try {
      for (
        const [shape, make] of [["sections", sectionsConfig], [
          "admin tokens",
          adminTokensConfig,
        ]] as const
      ) {
        for (const mib of [1, 4, 16]) {
          // Each just under its size: 16 MiB is the largest file accepted.
          const file = make(mib);
          let value: unknown;
          const read = seconds(() => value = parseJsonc(file, "f"));
          const valid = seconds(() => validateConfig(value, "f"));
          await Deno.writeTextFile(path, file);
          const start = performance.now();
          await loadConfig(path);
          const load = ((performance.now() - start) / 1000).toFixed(2);
          lines.push(
            `${shape}, ${
              (file.length / MIB).toFixed(1)
            } MiB: read ${read}, validate ${valid}, loadConfig ${load} s`,
          );
        }
      }
    } finally {
      await Deno.remove(path);
    }
    return lines;
  },
};
