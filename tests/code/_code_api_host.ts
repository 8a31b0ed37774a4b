/**
 * A real host for the `code_api` tests: skillbox's own skills plus a
 * watched drop-in folder, three tokens with different tool rules, a run
 * history, and the helpers that read, compile and wait on declarations.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import { defaultConfig } from "../../runtime/config.ts";

/** Token whose policy denies `secret_*`. */
export const TOKEN_A = "tok-a-0123456789";
/** Token the policy lets call `secret_*`. */
export const TOKEN_B = "tok-b-0123456789";
/** Token limited to `eval_typescript`: `code_api` itself is denied. */
export const TOKEN_C = "tok-c-0123456789";

/** A hostile description: it tries to close its comment and declare. */
export const HOSTILE = "*/ declare const injected: number; /*";

/** A running fixture. */
export interface CodeApiHost extends AsyncDisposable {
  host: Host;
  url: string;
  /** The watched drop-in folder. */
  skills: string;
  /** A folder the filesystem toolkit may be rooted at. */
  data: string;
}

/** The drop-in tools every test host starts with. */
export function dropIns(): Record<string, string> {
  return {
    "secret_tool.ts": tool("secret_tool", "A tool only token B may call"),
    "weather.ts": `export default {
  kind: "tool", name: "weather_forecast", defer_loading: true,
  description: "Forecast the weather for a city",
  input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  output: { type: "object", properties: { celsius: { type: "number" } }, required: ["celsius"] },
  run: (args) => ({ celsius: args.city.length }),
};`,
    // Stands for run_code on a host that does not ship it yet.
    "run_code.ts": tool("run_code", "Stands for the run_code tool"),
    "hostile.ts": hostileTool(),
  };
}

/**
 * A literal tool module.
 *
 * @param name its name
 * @param description its description
 * @returns the module's text
 */
export function tool(name: string, description: string): string {
  return `export default {
  kind: "tool", name: ${JSON.stringify(name)}, description: ${
    JSON.stringify(description)
  },
  input: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  run: (args) => args.n,
};`;
}

// Comment breakouts, names of Object's own properties, 10,000 properties
// and a recursive $ref, parsed as JSON so `__proto__` is an own key.
function hostileTool(): string {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 10_000; i++) properties[`p${i}`] = { type: "string" };
  const schema = JSON.stringify({
    type: "object",
    properties: {
      ...properties,
      tree: { $ref: "#/$defs/node" },
    },
    $defs: {
      node: {
        type: "object",
        description: HOSTILE,
        properties: {
          children: { type: "array", items: { $ref: "#/$defs/node" } },
          loop: { anyOf: [{ $ref: "#/$defs/node" }, { type: "null" }] },
        },
      },
    },
  }).replace(
    '"properties":{',
    `"properties":{"constructor":{"type":"string","description":${
      JSON.stringify(HOSTILE)
    }},"__proto__":{"type":"number"},"*/":{"type":"string"},`,
  );
  return `const input = JSON.parse(${JSON.stringify(schema)});
export default {
  kind: "tool", name: "hostile_tool", description: ${JSON.stringify(HOSTILE)},
  input,
  run: () => null,
};`;
}

/**
 * Starts the host, its drop-ins loaded.
 *
 * @returns the fixture; disposing closes it and removes its folders
 */
export async function startCodeApiHost(): Promise<CodeApiHost> {
  const skills = await Deno.makeTempDir({ prefix: "code_api_skills_" });
  const data = await Deno.makeTempDir({ prefix: "code_api_data_" });
  const store = await Deno.makeTempDir({ prefix: "code_api_store_" });
  for (const [name, text] of Object.entries(dropIns())) {
    await Deno.writeTextFile(join(skills, name), text);
  }
  const base = defaultConfig();
  const host = createHost({
    config: {
      skills: [skills],
      tokens: [TOKEN_A, TOKEN_B, TOKEN_C],
      sandbox: { ...base.sandbox, cacheDir: null },
      store: { path: join(store, "runs.db"), maxRuns: 1000, maxAgeDays: 1 },
      policy: {
        tools: {
          deny: ["secret_*"],
          tokens: {
            [TOKEN_B]: { allow: ["secret_*"] },
            [TOKEN_C]: { only: ["eval_typescript"] },
          },
        },
        permissions: { read: [data] },
      },
    },
  });
  const report = await host.ready;
  // The stand-in for run_code is refused where skillbox ships run_code
  // (shipped names win); code_api must leave it out either way.
  assert.deepEqual(
    report.errors.filter((e) => !e.path.endsWith("/run_code.ts")),
    [],
    "the drop-ins load",
  );
  const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    host,
    url,
    skills,
    data,
    async [Symbol.asyncDispose]() {
      await host.close({ timeoutSeconds: 1 });
      for (const dir of [skills, data, store]) {
        await Deno.remove(dir, { recursive: true });
      }
    },
  };
}

/** What `code_api` returns. */
export interface Declared {
  declarations: string;
  tools: string[];
  skills: string[];
  omitted: number;
}

/**
 * Type-checks declarations with snippets using them.
 *
 * @param declarations the text
 * @param snippets name → code; each is checked in its own file
 * @returns name → the compiler's errors for that file ("" when it compiles)
 */
export async function compile(
  declarations: string,
  snippets: Record<string, string>,
): Promise<Record<string, string>> {
  const dir = await Deno.makeTempDir({ prefix: "code_api_check_" });
  try {
    const files: string[] = [];
    for (const [name, code] of Object.entries(snippets)) {
      const file = join(dir, `${name}.ts`);
      await Deno.writeTextFile(file, `${declarations}\n${code}\nexport {};\n`);
      files.push(file);
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--no-config", "--no-lock", ...files],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const text = new TextDecoder().decode(out.stdout) +
      new TextDecoder().decode(out.stderr);
    const errors: Record<string, string> = {};
    for (const name of Object.keys(snippets)) {
      errors[name] = text.split(/\n(?=TS\d+ \[ERROR\])/)
        .filter((e) => e.includes(`/${name}.ts:`)).join("\n");
    }
    return errors;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
