/**
 * The chat relay of a skill call: the one path `ctx.llm.chat` and the agent
 * loop's turns take to the LLM. It counts each turn against the turn budget,
 * picks the provider on the first turn, and emits `llm.started`,
 * `llm.token`… and `llm.completed`.
 *
 * @module
 */

import type { ChatRequest, ChatResponse } from "../../protocol/chat.ts";
import type { LlmProvider } from "../llm/provider.ts";
import type { SkillEventLog } from "./events.ts";
import type { TurnBudget } from "./turn_budget.ts";

/** One LLM turn of a skill, optionally with its own abort signal. */
export type SkillChat = (
  request: ChatRequest,
  callSignal?: AbortSignal,
) => Promise<ChatResponse>;

/** What {@link createChatRelay} needs. */
export interface ChatRelayOptions {
  /** The skill's turn budget. */
  budget: TurnBudget;
  /** Where `llm.*` events go. */
  log: SkillEventLog;
  /** The skill call's signal (deadline and cancellation). */
  signal: AbortSignal;
  /** Picks the provider; called once, on the first turn. */
  provider: () => LlmProvider;
}

/**
 * Makes the chat function of one skill call.
 *
 * @param options budget, event log, signal and provider
 * @returns the relay
 * @example One turn against a fake provider
 * ```ts
 * import { createChatRelay } from "./chat_relay.ts";
 * import { SkillEventLog } from "./events.ts";
 * import { TurnBudget } from "./turn_budget.ts";
 * import assert from "node:assert/strict";
 * const log = new SkillEventLog("r1");
 * const chat = createChatRelay({
 *   budget: new TurnBudget("s", 1),
 *   log,
 *   signal: new AbortController().signal,
 *   provider: () => ({
 *     provider: "fake",
 *     model: "m",
 *     chat: (_request, options) => {
 *       options?.onToken?.("hi");
 *       return Promise.resolve({
 *         text: "hi", tool_calls: [], stop_reason: "end_turn",
 *         usage: { input_tokens: 1, output_tokens: 1 }, turn: options?.turn ?? 1,
 *       });
 *     },
 *   }),
 * });
 * assert.equal((await chat({ messages: [] })).text, "hi");
 * assert.deepEqual(log.events.map((e) => e.kind), ["llm.started", "llm.token", "llm.completed"]);
 * ```
 */
export function createChatRelay(options: ChatRelayOptions): SkillChat {
  const { budget, log, signal } = options;
  let provider: LlmProvider | null = null;
  return async (request, callSignal) => {
    signal.throwIfAborted();
    budget.check();
    provider ??= options.provider();
    const turn = budget.next();
    log.emit("llm.started", {
      turn,
      provider: provider.provider,
      model: provider.model,
    });
    const response = await provider.chat(request, {
      signal: callSignal ? AbortSignal.any([signal, callSignal]) : signal,
      turn,
      onToken: (text) => log.emit("llm.token", { text, turn }),
    });
    log.emit("llm.completed", {
      turn,
      usage: {
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
      },
      stop_reason: response.stop_reason,
    });
    return response;
  };
}
