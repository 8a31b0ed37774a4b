/**
 * An A2E agent in its own process, for the skills relay bench: it calls a
 * skill over the WebSocket and timestamps every `llm.token` event the moment
 * its frame is handed to `onmessage`. Running apart from the host keeps the
 * agent's JSON parsing, event loop and garbage collector out of the host's
 * figures, as a real agent's are. Spawned by {@link runRelayAgent}.
 *
 * Timestamps are epoch milliseconds (`performance.timeOrigin +
 * performance.now()`); processes on one machine share the wall clock, so
 * they compare with the mock provider's write times.
 *
 * Run: `deno run --allow-net bench/_relay_agent.ts '<AgentPlan JSON>'`.
 *
 * @module
 */

// deno-lint-ignore-file no-console

/** What the agent process does. */
export interface AgentPlan {
  /** `ws://…/a2e` */
  url: string;
  /** The skill to call. */
  skill: string;
  /** The skill's arguments (the bench's ask for the mock provider). */
  arguments: Record<string, unknown>;
  /** Connections, each running its calls one after another. */
  connections: number;
  /** Measured calls per connection. */
  runs: number;
  /** Unmeasured calls per connection first (JIT, connection setup). */
  warmup: number;
  /**
   * Connection `i` starts its measured calls `i × stagger_ms` late, so paced
   * streams are not all in step (real ones are not). @default 0
   */
  stagger_ms?: number;
}

/** One `llm.token` event as the agent received it. */
export interface ReceivedToken {
  /** The token's text. */
  text: string;
  /** Epoch milliseconds, sub-ms precision. */
  at: number;
}

/** What the agent reports. */
export interface AgentReport {
  /** Every token of the measured calls, in arrival order per connection. */
  tokens: ReceivedToken[];
  /** From the first measured request to the last answer, in seconds. */
  seconds: number;
}

/**
 * Runs an agent process to its end and returns its report.
 *
 * @param plan what the agent does
 * @returns the tokens it received and how long the measured calls took
 * @throws {Error} when the agent process fails (a call failed, or a token
 *   count did not match)
 * @example Ten calls on one connection
 * ```ts ignore
 * const report = await runRelayAgent({
 *   url, skill: "relay", arguments: { tokens: 50 }, connections: 1, runs: 10, warmup: 1,
 * });
 * ```
 */
export async function runRelayAgent(plan: AgentPlan): Promise<AgentReport> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      import.meta.filename!,
      JSON.stringify(plan),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!output.success) {
    throw new Error(
      `The relay agent failed: ${decoder.decode(output.stderr).trim()}`,
    );
  }
  return JSON.parse(decoder.decode(output.stdout)) as AgentReport;
}

/** Epoch milliseconds with sub-millisecond precision. */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

interface Connection {
  /** Runs one call; `onToken` sees each token as it arrives. */
  call(onToken: (text: string, at: number) => void): Promise<void>;
  close(): Promise<void>;
}

async function connect(plan: AgentPlan): Promise<Connection> {
  const ws = new WebSocket(plan.url);
  const waiting = new Map<string, {
    done: (message: Record<string, unknown>) => void;
    onToken?: (text: string, at: number) => void;
  }>();
  const closed = Promise.withResolvers<void>();
  ws.onclose = () => closed.resolve();
  ws.onmessage = (event) => {
    // Stamped before parsing: parsing is the agent's cost, not the relay's.
    const at = nowMs();
    const message = JSON.parse(String(event.data)) as Record<string, unknown>;
    const entry = waiting.get(String(message.req_id));
    if (!entry) return;
    if (message.type === "skill/event") {
      if (message.kind === "llm.token") {
        entry.onToken?.(String((message.data as { text: string }).text), at);
      }
    } else if (message.type !== "tool/event") {
      waiting.delete(String(message.req_id));
      entry.done(message);
    }
  };
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`Cannot connect to "${plan.url}"`));
  });
  const request = (
    message: Record<string, unknown>,
    onToken?: (text: string, at: number) => void,
  ): Promise<Record<string, unknown>> => {
    const id = crypto.randomUUID().replaceAll("-", "");
    const answer = Promise.withResolvers<Record<string, unknown>>();
    waiting.set(id, { done: answer.resolve, onToken });
    ws.send(
      JSON.stringify({ id, version: "1.0", ts: Date.now() / 1000, ...message }),
    );
    return answer.promise;
  };
  const hello = await request({
    type: "handshake/req",
    agent_caps: ["skill"],
  });
  if (hello.ok !== true) throw new Error("Handshake refused");
  return {
    async call(onToken) {
      const answer = await request({
        type: "skill/call/req",
        name: plan.skill,
        arguments: plan.arguments,
        streaming: true,
      }, onToken);
      const result = answer.data as { success?: boolean; error?: string };
      if (result?.success !== true) {
        throw new Error(`Skill "${plan.skill}" failed: ${result?.error}`);
      }
    },
    async close() {
      if (ws.readyState !== WebSocket.CLOSED) ws.close();
      await closed.promise;
    },
  };
}

async function main(plan: AgentPlan): Promise<AgentReport> {
  const connections = await Promise.all(
    Array.from({ length: plan.connections }, () => connect(plan)),
  );
  const ignore = () => {};
  await Promise.all(connections.map(async (c) => {
    for (let i = 0; i < plan.warmup; i++) await c.call(ignore);
  }));
  const tokens: ReceivedToken[] = [];
  const began = performance.now();
  await Promise.all(connections.map(async (c, n) => {
    const late = n * (plan.stagger_ms ?? 0);
    if (late > 0) await new Promise((resolve) => setTimeout(resolve, late));
    for (let i = 0; i < plan.runs; i++) {
      await c.call((text, at) => tokens.push({ text, at }));
    }
  }));
  const seconds = (performance.now() - began) / 1000;
  await Promise.all(connections.map((c) => c.close()));
  return { tokens, seconds };
}

if (import.meta.main) {
  const plan = JSON.parse(Deno.args[0] ?? "") as AgentPlan;
  console.log(JSON.stringify(await main(plan)));
}
