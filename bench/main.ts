/**
 * `deno task bench`: runs every bench in {@link BENCHES} in turn and prints
 * its result lines. To add a bench, export a {@link Bench} from a module in
 * `bench/` and append it to the list.
 *
 * @module
 */

// The bench runner is a CLI: printing results is its job.
// deno-lint-ignore-file no-console

import { pingBench } from "./ping_bench.ts";
import { searchBench } from "./search_bench.ts";
import { sandboxBench } from "./sandbox_bench.ts";
import { toolsBench } from "./tools_bench.ts";
import { discoveryBench } from "./discovery_bench.ts";
import { llmRelayBench } from "./llm_relay_bench.ts";
import { skillsBench } from "./skills_bench.ts";
import { capacityBench } from "./capacity_bench.ts";
import { mcpBench } from "./mcp_bench.ts";
import { mcpSkillsBench } from "./mcp_skills_bench.ts";
import { confinementBench } from "./confinement_bench.ts";
import { consoleBench } from "./console_bench.ts";
import { storeBench } from "./store_bench.ts";
import { egressBench } from "./egress_bench.ts";
import { fleetBench } from "./fleet_bench.ts";
import { codeBench } from "./code_bench.ts";
import { warmWalkBench } from "./warm_walk.ts";
import { schemaStepsBench } from "./schema_steps_bench.ts";
import { csvProfileBench } from "./csv_profile_bench.ts";
import { configBench } from "./config_bench.ts";

/** One benchmark: a name and a run that returns the lines to print. */
export interface Bench {
  name: string;
  run(): Promise<string[]>;
}

/** Every bench `deno task bench` runs, in order. */
export const BENCHES: Bench[] = [
  pingBench,
  searchBench,
  sandboxBench,
  toolsBench,
  discoveryBench,
  llmRelayBench,
  skillsBench,
  mcpBench,
  mcpSkillsBench,
  confinementBench,
  egressBench,
  consoleBench,
  storeBench,
  capacityBench,
  fleetBench,
  codeBench,
  warmWalkBench,
  schemaStepsBench,
  csvProfileBench,
  configBench,
];

if (import.meta.main) {
  const only = Deno.args[0];
  let failed = false;
  for (const bench of BENCHES) {
    if (only && !bench.name.includes(only)) continue;
    console.log(`# ${bench.name}`);
    try {
      for (const line of await bench.run()) console.log(`  ${line}`);
    } catch (error) {
      failed = true;
      console.log(`  failed: ${(error as Error).message}`);
    }
  }
  if (failed) Deno.exit(1);
}
