/**
 * The sandbox hooks of one tool call: its events scrubbed of the toolkit's
 * secrets, numbered, kept up to a bound and relayed as they happen; its
 * `ctx.tools` and `ctx.llm` refused (only skills may use them); its
 * `ctx.fetch` performed by the host's egress broker within the call's grant.
 *
 * @module
 */

import { SkillboxError } from "../../protocol/errors.ts";
import type { CallEvent } from "../../protocol/tool.ts";
import type { SandboxHooks } from "../sandbox/types.ts";
import type { FetchRequest, FetchResponse } from "../../protocol/egress.ts";
import type { EgressBroker } from "../egress/broker.ts";
import { scrubSecrets } from "../toolkits/secrets.ts";
import type { InnerCall } from "../code/inner_calls.ts";
import type { SessionScope } from "../capability.ts";

/**
 * The most bytes of events one call's result keeps (as JSON text, counted in
 * UTF-16 units): the count bound alone let 1,000 events of 1 MiB each sit in
 * the host for one call. Later events are still relayed live.
 */
export const RESULT_EVENT_BYTES: number = 8 * 1024 * 1024;

/**
 * The size of an event as kept for a result, in UTF-16 units of its JSON.
 *
 * @param event the event
 * @returns its JSON text's length
 * @example
 * ```ts
 * import { eventSize } from "./call_hooks.ts";
 * import assert from "node:assert/strict";
 * assert.equal(eventSize({ kind: "log", data: { message: "hi" }, seq: 0 }), 46);
 * ```
 */
export function eventSize(event: CallEvent): number {
  return JSON.stringify(event).length;
}

/** What {@link ToolCallHooks} needs from the request. */
export interface HookedRequest {
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Receives each event as it happens. */
  onEvent?: (event: CallEvent) => void;
  /** The session calling (a tool the host answers itself reads it). */
  session?: SessionScope;
}

/** Where a call's `ctx.fetch` may go, and who performs it. */
export interface CallEgress {
  /** The host's broker. */
  broker: EgressBroker;
  /** The call's grant `net` list (the policy bounds it, config narrows it). */
  net: readonly string[];
  /** The tool's toolkit, for secrets bound to toolkits. */
  toolkit: string | null;
}

/**
 * The hooks of one tool call.
 *
 * @example Events are numbered and scrubbed
 * ```ts
 * import { ToolCallHooks } from "./call_hooks.ts";
 * import assert from "node:assert/strict";
 * const hooks = new ToolCallHooks({}, ["s3cret"], 10);
 * hooks.onEvent("log", { message: "key s3cret" });
 * assert.equal(hooks.events[0]?.seq, 0);
 * assert.ok(!JSON.stringify(hooks.events).includes("s3cret"));
 * ```
 */
export class ToolCallHooks implements SandboxHooks {
  /** The call's abort signal. */
  readonly signal: AbortSignal | undefined;
  /** The session calling, for a tool the host answers (`code_api`). */
  readonly session: SessionScope | undefined;
  /** Events kept for the result. */
  readonly events: CallEvent[] = [];
  /** Whether events beyond the bound were dropped from the result. */
  eventsCut = false;
  /**
   * The inner calls of the shipped `run_code` (code mode); null refuses
   * `ctx.tools` as for every other tool.
   */
  inner: InnerCall | null = null;
  readonly #request: HookedRequest;
  readonly #secrets: readonly string[];
  readonly #maxEvents: number;
  readonly #egress: CallEgress | null;
  #seq = 0;
  #keptBytes = 0;

  /**
   * @param request the call's signal and event listener
   * @param secrets values scrubbed from every event
   * @param maxEvents how many events the result keeps
   * @param egress the broker and the call's net grant; null refuses fetch
   */
  constructor(
    request: HookedRequest,
    secrets: readonly string[],
    maxEvents: number,
    egress: CallEgress | null = null,
  ) {
    this.signal = request.signal;
    this.session = request.session;
    this.#request = request;
    this.#secrets = secrets;
    this.#maxEvents = maxEvents;
    this.#egress = egress;
  }

  /** `ctx.fetch`: the broker performs it, to the grant's hosts only. */
  fetch(request: FetchRequest, signal: AbortSignal): Promise<FetchResponse> {
    const egress = this.#egress;
    if (!egress) {
      return Promise.reject(
        new SkillboxError("tool_denied", "ctx.fetch is not available here"),
      );
    }
    return egress.broker.fetch(request, {
      allow: [[...egress.net]],
      toolkit: egress.toolkit,
      signal,
    });
  }

  /** Records and relays one event. */
  onEvent(kind: string, data: Record<string, unknown>): void {
    const secrets = this.#secrets;
    const event: CallEvent = secrets.length === 0
      ? { kind, data, seq: this.#seq++ }
      : {
        kind: scrubSecrets(kind, secrets),
        data: scrubSecrets(data, secrets),
        seq: this.#seq++,
      };
    if (this.eventsCut || this.events.length >= this.#maxEvents) {
      this.eventsCut = true;
    } else {
      this.#keptBytes += eventSize(event);
      // Past the byte bound nothing more is kept, so the order stays whole.
      if (this.#keptBytes <= RESULT_EVENT_BYTES) this.events.push(event);
      else this.eventsCut = true;
    }
    this.#request.onEvent?.(event);
  }

  /** Refused: a tool may not call tools (but `run_code`, through `inner`). */
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown> {
    if (this.inner !== null) return this.inner(name, args, signal);
    return Promise.reject(
      new SkillboxError(
        "tool_denied",
        "Cannot call a tool from a tool: only skills may use ctx.tools",
      ),
    );
  }

  /** Refused: a tool may not use the LLM. */
  chat(): Promise<never> {
    return Promise.reject(
      new SkillboxError(
        "tool_denied",
        "Cannot use the LLM from a tool: only skills may use ctx.llm",
      ),
    );
  }
}
