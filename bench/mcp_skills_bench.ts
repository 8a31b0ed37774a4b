/**
 * Skills over MCP (SEP-2640) at size: `skills/list` of a host serving 500
 * Agent Skills folders, every page followed over Streamable HTTP with the
 * official SDK client (the first listing, which hashes every file, apart;
 * then median and p95 of whole listings), and `resources/read` of a 1 MiB
 * binary skill file (returned as a base64 blob).
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { join } from "node:path";
import { createHost } from "../runtime/host.ts";
import { latencyStats } from "./_stats.ts";
import type { Bench } from "./main.ts";

const SKILLS = 500;
const LISTINGS = 30;
const READS = 30;
const BIG = "skill://skill-0/reference/big.bin";

// Nearest rank, as latencyStats does.
function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[
    Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)
  ]!;
}

const figures = (values: number[]) => {
  const s = latencyStats(values);
  return `min ${s.min.toFixed(1)} ms, median ${s.median.toFixed(1)} ms, p95 ${
    p95(values).toFixed(1)
  } ms, max ${s.max.toFixed(1)} ms (${s.count} runs)`;
};

async function writeSkills(dir: string): Promise<void> {
  for (let i = 0; i < SKILLS; i++) {
    const name = `skill-${i}`;
    await Deno.mkdir(join(dir, name, "reference"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, name, "SKILL.md"),
      `---\nname: ${name}\ndescription: Skill number ${i}, for the bench\n---\nSee [the reference](reference/a.md).\n`,
    );
    await Deno.writeTextFile(
      join(dir, name, "reference", "a.md"),
      "x".repeat(2000),
    );
  }
  const big = new Uint8Array(1 << 20).map((_, i) => (i * 31) & 0xff);
  await Deno.writeFile(join(dir, "skill-0", "reference", "big.bin"), big);
}

/** The Skills-over-MCP bench. */
export const mcpSkillsBench: Bench = {
  name: "mcp-skills",
  async run() {
    const dir = await Deno.makeTempDir();
    await writeSkills(dir);
    const host = createHost({
      config: {
        skills: [dir],
        builtinSkills: false,
        sandbox: {
          cacheDir: null,
          memoryMb: 256,
          maxIdleProcesses: 8,
          spareWorkers: 1,
          maxResultBytes: 1 << 20,
        },
      },
    });
    const client = new Client({ name: "bench", version: "1" });
    try {
      await host.ready;
      const { url } = await host.listen({ hostname: "127.0.0.1", port: 0 });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${url}/mcp`)),
      );
      let pages = 0;
      const listAll = async () => {
        let cursor: string | undefined;
        let count = 0;
        pages = 0;
        do {
          const page = await client.request(
            {
              method: "skills/list",
              params: cursor ? { cursor } : {},
            } as never,
            ResultSchema,
          );
          pages++;
          count += (page.skills as unknown[]).length;
          cursor = page.nextCursor as string | undefined;
        } while (cursor);
        return count;
      };
      let t = performance.now();
      const listed = await listAll();
      const first = performance.now() - t;
      if (listed !== SKILLS) {
        throw new Error(`skills/list listed ${listed} skills, not ${SKILLS}`);
      }
      const listings: number[] = [];
      for (let i = 0; i < LISTINGS; i++) {
        t = performance.now();
        await listAll();
        listings.push(performance.now() - t);
      }
      const reads: number[] = [];
      for (let i = 0; i < READS; i++) {
        t = performance.now();
        const read = await client.readResource({ uri: BIG });
        reads.push(performance.now() - t);
        const blob = (read.contents[0] as { blob?: string }).blob ?? "";
        if (blob.length < (1 << 20) * 4 / 3) {
          throw new Error(
            `resources/read returned ${blob.length} base64 chars`,
          );
        }
      }
      return [
        `load average (1 min): ${Deno.loadavg()[0]!.toFixed(2)}`,
        `skills/list, ${SKILLS} skills (${pages} pages, all followed, HTTP, SDK client): first listing ${
          first.toFixed(0)
        } ms (hashes every file); then ${figures(listings)}`,
        `resources/read of a 1 MiB skill file (base64 blob): ${figures(reads)}`,
      ];
    } finally {
      await client.close().catch(() => {});
      await host.close({ timeoutSeconds: 1 });
      await Deno.remove(dir, { recursive: true });
    }
  },
};
