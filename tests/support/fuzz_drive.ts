/**
 * Drives the seeded fuzzer (`fuzz.ts`) against a running host over each
 * transport, and checks the invariants after each batch: every request with
 * a readable id got exactly one final answer of a documented shape (never
 * a hang: a generous bound only detects being stuck), no HTTP 500, and the
 * host still serves a fresh session and keeps its history readable. The
 * caller checks the host's stderr.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ERROR_CODES } from "../../protocol/codes.ts";
import { a2eMutants, type McpMutant, mcpMutants, type Mutant } from "./fuzz.ts";

/** A decoded message. */
export type Msg = Record<string, unknown>;

/** How long a batch may take before it counts as stuck. */
export const STUCK_MS = 60_000;

const FINAL_TYPES = new Set([
  "handshake/resp",
  "pong",
  "error",
  "tool/list/resp",
  "tool/call/resp",
  "toolkit/list/resp",
  "toolkit/configure/resp",
  "skill/discover/resp",
  "skill/call/resp",
]);
const EVENT_TYPES = new Set(["tool/event", "skill/event", "invoke/event"]);

/** One A2E session, however it is carried. */
export interface A2eWire {
  /** Resolves when the connection has closed. */
  readonly closed: Promise<void>;
  send(raw: string): Promise<void>;
  /** Every message received so far, in order. */
  readonly received: readonly Msg[];
  /** Resolves when a new message arrives (or after `ms`). */
  arrival(ms: number): Promise<void>;
  close(): Promise<void>;
}

/** Asserts one outgoing A2E message has the documented shape. */
export function assertA2eShape(msg: Msg, note: string): void {
  const type = String(msg.type);
  assert.ok(
    FINAL_TYPES.has(type) || EVENT_TYPES.has(type),
    `unknown type answering ${note}: ${JSON.stringify(msg).slice(0, 400)}`,
  );
  assert.equal(msg.version, "1.0", note);
  assert.match(String(msg.id), /^[0-9a-f]{32}$/, note);
  assert.equal(typeof msg.ts, "number", note);
  if (type === "error") {
    assert.ok(
      (ERROR_CODES as readonly string[]).includes(String(msg.code)),
      `undocumented code answering ${note}: ${JSON.stringify(msg)}`,
    );
    assert.equal(typeof msg.message, "string", note);
    assert.notEqual(msg.message, "", note);
    assert.doesNotMatch(
      String(msg.message),
      /\n\s+at /,
      `a stack trace answering ${note}`,
    );
  }
}

function finalsById(messages: readonly Msg[]): Map<string, Msg[]> {
  const out = new Map<string, Msg[]>();
  for (const msg of messages) {
    if (!FINAL_TYPES.has(String(msg.type))) continue;
    const id = typeof msg.req_id === "string" ? msg.req_id : "";
    let list = out.get(id);
    if (!list) out.set(id, list = []);
    list.push(msg);
  }
  return out;
}

/**
 * Sends one batch of A2E mutants on `wire` and asserts every readable id
 * got exactly as many final answers as it was sent, each well-shaped.
 *
 * @param wire the session
 * @param batch seed, count and whether to handshake first
 */
export async function driveA2eBatch(
  wire: A2eWire,
  batch: { seed: number; count: number; handshake: boolean; prefix: string },
): Promise<void> {
  const mutants: Mutant[] = a2eMutants(batch.seed, batch);
  // A wire may carry several batches: count only this one's answers.
  const from = wire.received.length;
  const received = () => wire.received.slice(from);
  const expected = new Map<string, { count: number; notes: string[] }>();
  const expect = (id: string, note: string) => {
    const entry = expected.get(id) ?? { count: 0, notes: [] };
    entry.count++;
    entry.notes.push(note);
    expected.set(id, entry);
  };
  if (batch.handshake) {
    const id = `${batch.prefix}hs${batch.seed}`;
    await wire.send(JSON.stringify({ type: "handshake/req", id }));
    expect(id, "handshake");
  }
  for (const mutant of mutants) {
    await wire.send(mutant.raw);
    if (mutant.answerId !== null) expect(mutant.answerId, mutant.note);
  }
  // A ping last: answered once every earlier message was read.
  const sentinel = `${batch.prefix}end${batch.seed}`;
  await wire.send(JSON.stringify({ type: "ping", id: sentinel }));
  expect(sentinel, "sentinel");
  const deadline = Date.now() + STUCK_MS;
  const missing = () => {
    const got = finalsById(received());
    return [...expected].filter(([id, e]) =>
      (got.get(id)?.length ?? 0) < e.count
    );
  };
  while (missing().length > 0) {
    const left = deadline - Date.now();
    if (left <= 0) {
      assert.fail(
        `Stuck: no answer within ${STUCK_MS} ms to ${
          missing().slice(0, 10).map(([id, e]) =>
            `${JSON.stringify(id)} (${e.notes.join("; ").slice(0, 200)})`
          ).join(", ")
        }`,
      );
    }
    await wire.arrival(left);
  }
  // One more round trip: any extra answer would have come by now.
  const last = `${batch.prefix}last${batch.seed}`;
  await wire.send(JSON.stringify({ type: "ping", id: last }));
  while (!finalsById(received()).has(last)) {
    await wire.arrival(STUCK_MS);
    assert.ok(Date.now() < deadline + STUCK_MS, "Stuck on the last ping");
  }
  const got = finalsById(received());
  for (const [id, entry] of expected) {
    const answers = got.get(id) ?? [];
    assert.equal(
      answers.length,
      entry.count,
      `${JSON.stringify(id)} (${
        entry.notes.join("; ").slice(0, 300)
      }): ${answers.length} answers: ${JSON.stringify(answers).slice(0, 600)}`,
    );
  }
  for (const id of got.keys()) {
    assert.ok(
      expected.has(id) || id === last,
      `an answer to nothing sent: ${JSON.stringify(got.get(id)).slice(0, 400)}`,
    );
  }
  for (const msg of received()) assertA2eShape(msg, String(msg.req_id));
  if (Deno.env.get("FUZZ_VERBOSE")) summarize(received());
  const dump = Deno.env.get("FUZZ_DUMP");
  if (dump) {
    Deno.writeTextFileSync(
      dump,
      received().map((m) => JSON.stringify(m).slice(0, 2000) + "\n").join(""),
      { append: true },
    );
  }
}

/** A WebSocket carrying one A2E session. */
export async function wsWire(url: string): Promise<A2eWire> {
  const socket = new WebSocket(url);
  const received: Msg[] = [];
  let wake: (() => void) | undefined;
  socket.onmessage = (event) => {
    received.push(JSON.parse(String(event.data)));
    wake?.();
  };
  const closed = new Promise<void>((resolve) => {
    socket.onclose = () => {
      resolve();
      wake?.();
    };
  });
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error(`Cannot connect to "${url}"`));
  });
  return {
    received,
    closed,
    send(raw) {
      socket.send(raw);
      return Promise.resolve();
    },
    arrival: (ms) => waitFor((w) => wake = w, ms),
    async close() {
      socket.close();
      await closed;
    },
  };
}

function waitFor(set: (w: () => void) => void, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    set(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** An HTTP+SSE transport session carrying one A2E session. */
export async function sseWire(base: string): Promise<A2eWire> {
  const res = await fetch(`${base}/session`, { method: "POST" });
  assert.equal(res.status, 200);
  const { session_id: sessionId } = await res.json();
  const abort = new AbortController();
  const stream = await fetch(`${base}/stream`, {
    headers: { "x-session-id": sessionId },
    signal: abort.signal,
  });
  assert.equal(stream.status, 200);
  const received: Msg[] = [];
  let wake: (() => void) | undefined;
  const reading = (async () => {
    let buffer = "";
    try {
      for await (
        const text of stream.body!.pipeThrough(new TextDecoderStream())
      ) {
        buffer += text;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split("\n").filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart()).join("\n");
          if (data !== "") received.push(JSON.parse(data));
        }
        wake?.();
      }
    } catch {
      // Aborted at close.
    }
  })();
  return {
    received,
    closed: reading,
    async send(raw) {
      const res = await fetch(`${base}/send`, {
        method: "POST",
        headers: { "x-session-id": sessionId, "content-type": "text/plain" },
        body: raw,
      });
      const text = await res.text();
      assert.ok(
        res.status === 200 || res.status === 413,
        `/send answered ${res.status}: ${text.slice(0, 300)}`,
      );
    },
    arrival: (ms) => waitFor((w) => wake = w, ms),
    async close() {
      abort.abort();
      await reading;
    },
  };
}

/**
 * A host process on `--stdio`, as the A2E SDK's SubprocessTransport runs it,
 * or on `--mcp`: the same line framing, only the messages differ.
 */
export function stdioWire(
  command: Deno.Command,
): A2eWire & { child: Deno.ChildProcess; stderr: Promise<string> } {
  const child = command.spawn();
  const writer = child.stdin.getWriter();
  const received: Msg[] = [];
  let wake: (() => void) | undefined;
  const reading = (async () => {
    let buffer = "";
    for await (
      const text of child.stdout.pipeThrough(new TextDecoderStream())
    ) {
      buffer += text;
      let end;
      while ((end = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.trim() !== "") received.push(JSON.parse(line));
      }
      wake?.();
    }
  })();
  const stderr = new Response(child.stderr).text();
  return {
    child,
    stderr,
    received,
    closed: reading,
    send: (raw) => writer.write(new TextEncoder().encode(raw + "\n")),
    arrival: (ms) => waitFor((w) => wake = w, ms),
    async close() {
      await writer.close();
      await child.status;
      await reading;
    },
  };
}

/** What an MCP POST came back with. */
interface McpAnswer {
  status: number;
  messages: Msg[];
}

async function mcpPost(
  url: string,
  body: string,
  session?: string,
): Promise<McpAnswer & { session?: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(session ? { "mcp-session-id": session } : {}),
      "mcp-protocol-version": "2025-06-18",
    },
    body,
    signal: AbortSignal.timeout(STUCK_MS),
  });
  const text = await res.text();
  const messages: Msg[] = [];
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    for (const block of text.split("\n\n")) {
      const data = block.split("\n").filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart()).join("\n");
      if (data !== "") messages.push(JSON.parse(data));
    }
  } else if (text !== "") {
    const value = JSON.parse(text);
    messages.push(...(Array.isArray(value) ? value : [value]));
  }
  return {
    status: res.status,
    messages,
    session: res.headers.get("mcp-session-id") ?? undefined,
  };
}

/** Opens an MCP session on `url` (`.../mcp`); returns its id. */
export async function mcpOpen(url: string): Promise<string> {
  const answer = await mcpPost(
    url,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "fuzz", version: "1" },
      },
    }),
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.messages));
  assert.ok(answer.session, "initialize gave a session id");
  const done = await mcpPost(
    url,
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    answer.session,
  );
  assert.equal(done.status, 202);
  return answer.session;
}

function assertMcpMessage(msg: Msg, note: string): void {
  assert.equal(msg.jsonrpc, "2.0", note);
  if ("error" in msg) {
    const error = msg.error as Msg;
    assert.ok(Number.isInteger(error.code), `${note}: ${JSON.stringify(msg)}`);
    // A client's bad input is its own mistake, not the server's.
    assert.notEqual(error.code, -32603, `${note}: ${JSON.stringify(msg)}`);
    assert.equal(typeof error.message, "string", note);
    assert.doesNotMatch(String(error.message), /\n\s+at /, note);
  }
}

/**
 * Sends one batch of MCP mutants on the session `session`, one POST each,
 * and asserts: no 500; a well-formed body's requests each answered once;
 * a malformed one refused with a JSON-RPC error.
 *
 * @param url the `/mcp` endpoint
 * @param batch seed, count and the session
 */
export async function driveMcpBatch(
  url: string,
  batch: { seed: number; count: number; session: string },
): Promise<void> {
  const mutants: McpMutant[] = mcpMutants(batch.seed, batch);
  // Concurrently, a few at a time, as a client with requests in flight.
  const width = 4;
  for (let i = 0; i < mutants.length; i += width) {
    await Promise.all(
      mutants.slice(i, i + width).map(async (mutant) => {
        const note = `${mutant.note.slice(0, 200)} <${
          mutant.raw.slice(0, 200)
        }>`;
        const answer = await mcpPost(url, mutant.raw, batch.session);
        if (Deno.env.get("FUZZ_VERBOSE")) {
          // deno-lint-ignore no-console
          console.error(
            answer.status,
            note.slice(0, 160),
            JSON.stringify(answer.messages).slice(0, 300),
          );
        }
        assert.ok(answer.status < 500, `${answer.status} for ${note}`);
        for (const msg of answer.messages) assertMcpMessage(msg, note);
        if (!mutant.wellFormed) {
          assert.ok(answer.status >= 400, `${answer.status} for ${note}`);
          return;
        }
        if (answer.status >= 400) {
          // Refused whole: a JSON-RPC error says why.
          assert.ok(answer.messages.length > 0, `${answer.status} for ${note}`);
          assert.ok("error" in answer.messages[0]!, note);
          return;
        }
        const finals = answer.messages.filter((m) =>
          "result" in m || "error" in m
        );
        for (const id of mutant.ids) {
          const answers = finals.filter((m) => m.id === id);
          assert.equal(
            answers.length,
            1,
            `${answers.length} answers to ${JSON.stringify(id)} of ${note}: ${
              JSON.stringify(answer.messages).slice(0, 500)
            }`,
          );
        }
      }),
    );
  }
}

/** Asserts a fresh MCP session lists tools and calls `echo`. */
export async function assertMcpServes(url: string): Promise<void> {
  const session = await mcpOpen(url);
  const call = await mcpPost(
    url,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "alive" } },
    }),
    session,
  );
  assert.equal(call.status, 200);
  const result = call.messages.find((m) => m.id === 1)?.result as Msg;
  assert.deepEqual(
    (result?.structuredContent as Msg | undefined)?.text,
    "alive",
    JSON.stringify(call.messages),
  );
  await fetch(url, { method: "DELETE", headers: { "mcp-session-id": session } })
    .then((r) => r.body?.cancel());
}

/**
 * The answer to request `id` on an A2E wire (not its events), waiting for
 * the messages still to come; fails when none comes within `ms`.
 */
export async function answerTo(
  wire: A2eWire,
  id: string,
  ms = 30_000,
): Promise<Msg> {
  for (;;) {
    const found = wire.received.find((m) =>
      m.req_id === id && !String(m.type).endsWith("/event")
    );
    if (found) return found;
    const before = wire.received.length;
    await wire.arrival(ms);
    assert.ok(wire.received.length > before, `No answer to "${id}"`);
  }
}

/** Asserts a fresh A2E session answers a ping and a trivial tool call. */
export async function assertA2eServes(wire: A2eWire): Promise<void> {
  const from = wire.received.length;
  await wire.send(JSON.stringify({ type: "handshake/req", id: "ok-h" }));
  await wire.send(JSON.stringify({ type: "ping", id: "ok-p" }));
  await wire.send(JSON.stringify({
    type: "tool/call/req",
    id: "ok-c",
    tool_name: "echo",
    arguments: { text: "alive" },
  }));
  const deadline = Date.now() + STUCK_MS;
  const find = (id: string) =>
    finalsById(wire.received.slice(from)).get(id)?.[0];
  while (!find("ok-c") || !find("ok-p")) {
    assert.ok(Date.now() < deadline, "A fresh session is not served");
    await wire.arrival(STUCK_MS);
  }
  assert.equal(find("ok-p")!.type, "pong");
  const call = find("ok-c")!;
  assert.equal(call.type, "tool/call/resp", JSON.stringify(call));
  const data = (call.data as Msg).data as Msg;
  assert.equal(data?.text, "alive", JSON.stringify(call));
  assert.equal(data?.count, 0, JSON.stringify(call));
}

/** Asserts the run history is readable. */
export async function assertHistoryReadable(base: string): Promise<void> {
  const res = await fetch(`${base}/api/runs?limit=50`);
  const text = await res.text();
  assert.equal(res.status, 200, text.slice(0, 300));
  const page = JSON.parse(text);
  assert.ok(Array.isArray(page.runs), text.slice(0, 300));
}

/** Lines of a host's stderr that show an uncaught error or a stack trace. */
export function crashLines(lines: readonly string[]): string[] {
  // Deno colours what it prints on a crash: the escapes are matched.
  // deno-lint-ignore no-control-regex
  return lines.map((line) => line.replace(/\x1b\[[0-9;]*m/g, "")).filter((
    line,
  ) =>
    /^error: Uncaught|^\s+at .+:\d+:\d+\)?$|panicked|Maximum call stack/
      .test(line)
  );
}

function summarize(messages: readonly Msg[]): void {
  const counts: Record<string, number> = {};
  for (const msg of messages) {
    const data = msg.data as Msg | null | undefined;
    const key = msg.type === "error"
      ? `error ${msg.code}`
      : `${msg.type}${
        typeof data?.success === "boolean"
          ? ` ${data.success} ${data.error_code ?? ""}`
          : ""
      }${msg.status ? ` ${msg.status}` : ""}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  // deno-lint-ignore no-console
  console.error(counts);
}

/**
 * Sends one batch of MCP mutants as lines on an `--mcp` session and asserts
 * each readable id of a single (not batched) request was answered once.
 *
 * @param wire the session (initialized or not: both are fuzzed)
 * @param batch seed and count
 */
export async function driveMcpStdioBatch(
  wire: A2eWire,
  batch: { seed: number; count: number },
): Promise<void> {
  const from = wire.received.length;
  const expected = new Map<unknown, string[]>();
  for (const mutant of mcpMutants(batch.seed, batch)) {
    await wire.send(mutant.raw);
    // A batch is no message on stdio: the SDK logs it and answers nothing.
    if (mutant.raw.startsWith("[")) continue;
    for (const id of mutant.ids) {
      expected.set(id, [...expected.get(id) ?? [], mutant.note]);
    }
  }
  const last = `end${batch.seed}`;
  await wire.send(JSON.stringify({ jsonrpc: "2.0", id: last, method: "ping" }));
  expected.set(last, ["sentinel"]);
  const answers = () => {
    const byId = new Map<unknown, Msg[]>();
    for (const msg of wire.received.slice(from)) {
      if (!("result" in msg || "error" in msg)) continue;
      byId.set(msg.id, [...byId.get(msg.id) ?? [], msg]);
    }
    return byId;
  };
  const deadline = Date.now() + STUCK_MS;
  const missing = () =>
    [...expected].filter(([id, notes]) =>
      (answers().get(id)?.length ?? 0) < notes.length
    );
  while (missing().length > 0) {
    assert.ok(
      Date.now() < deadline,
      `Stuck: no answer to ${
        missing().slice(0, 8).map(([id, notes]) =>
          `${JSON.stringify(id)} (${notes.join("; ").slice(0, 200)})`
        ).join(", ")
      }`,
    );
    await wire.arrival(deadline - Date.now());
  }
  for (const [id, list] of answers()) {
    for (const msg of list) assertMcpMessage(msg, JSON.stringify(id));
    if (id === null) {
      assert.ok(list.every((m) => "error" in m), JSON.stringify(list));
      continue;
    }
    assert.equal(
      list.length,
      expected.get(id)?.length,
      `${JSON.stringify(id)}: ${JSON.stringify(list).slice(0, 500)}`,
    );
  }
}
