/**
 * The skills' LLM resolver over the host's configured providers.
 *
 * @module
 */

import {
  createProvider,
  type CreateProviderOptions,
  resolveLlmConfig,
} from "../llm/config.ts";
import type { LlmConfig } from "../llm/config_check.ts";
import { encodeLlmChoice, type LlmChoice } from "../../protocol/skill.ts";
import type { LlmResolver } from "./run_types.ts";

/**
 * An {@link LlmResolver} over the host's `llm` entries (`skillbox.jsonc`):
 * `llm_override`, else the skill's `llm_config`, else the host default, with
 * credentials kept in the host (see `runtime/llm/config.ts`).
 *
 * @param host the `llm` entries
 * @param options an env reader for `api_key_env` (@default Deno.env.get),
 *   the operator's `llm` rules and the egress broker that checks endpoints
 *   a client or a skill chose (see `createProvider`)
 * @returns the resolver
 * @throws nothing itself; the resolver throws `skill_error` naming what to set
 * @example No provider configured
 * ```ts
 * import { hostLlm } from "./host_llm.ts";
 * import assert from "node:assert/strict";
 * assert.throws(() => hostLlm([])({ override: null, skill: null }), /provider/i);
 * ```
 */
export function hostLlm(
  host: readonly LlmConfig[],
  options: {
    env?: (name: string) => string | undefined;
  } & CreateProviderOptions = {},
): LlmResolver {
  // One provider (one SDK client, one connection pool) per distinct
  // choice: a fresh client per call would pay connection setup every time.
  const providers = new Map<string, ReturnType<typeof createProvider>>();
  return ({ override, skill }) => {
    const resolved = resolveLlmConfig(host, {
      override: asConfig(override),
      skill: asConfig(skill),
      env: options.env,
    });
    const key = JSON.stringify(resolved);
    let provider = providers.get(key);
    if (!provider) {
      if (providers.size >= 32) providers.clear(); // overrides are unbounded
      provider = createProvider(resolved, options);
      providers.set(key, provider);
    }
    return provider;
  };
}

// The LLM module reads choices in the configuration's (wire) shape.
function asConfig(choice: LlmChoice | null): LlmConfig | null {
  return choice && encodeLlmChoice(choice);
}
