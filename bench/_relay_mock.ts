/**
 * A mock LLM provider in its own process, for the relay benches: its event
 * loop and garbage collector then cost the host nothing, as a real provider's
 * do not. Spawned by {@link spawnRelayMock}.
 *
 * Each request's last user message is read as a {@link RelayAsk} (the skills
 * bench passes it as the skill's arguments, which the agent loop sends as
 * the user message), so one mock serves every mode. Token `i` of request `r`
 * is the text `r<r>t<i> `, unique in the run, so a receiver pairs each token
 * with its write by text. When stdin closes, the mock prints every
 * {@link TokenWrite} as one JSON line and exits.
 *
 * Run: `deno run --allow-net bench/_relay_mock.ts openai|anthropic`.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import {
  type MockLlmServer,
  type MockTurn,
  type RecordedRequest,
  startMockOpenAI,
  type TokenWrite,
} from "../tests/support/mock_openai.ts";
import { startMockAnthropic } from "../tests/support/mock_anthropic.ts";

/** What a bench asks the mock to stream for one request. */
export interface RelayAsk {
  /** How many text tokens. */
  tokens: number;
  /** Milliseconds before each token; absent: all at once (a burst). */
  interval_ms?: number;
}

/** A mock provider running in a child process. */
export interface RelayMock {
  /** The `base_url` to configure. */
  url: string;
  /** Stops the mock and returns every token it wrote, keyed by text. */
  stop(): Promise<Map<string, TokenWrite>>;
}

/**
 * Starts `bench/_relay_mock.ts` in a child process.
 *
 * @param provider which provider's streaming format to speak
 * @returns the mock's URL and a stop that collects its token writes
 * @example Start and stop
 * ```ts ignore
 * const mock = await spawnRelayMock("openai");
 * const writes = await mock.stop();
 * ```
 */
export async function spawnRelayMock(
  provider: "openai" | "anthropic",
): Promise<RelayMock> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", import.meta.filename!, provider],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(lineSplitter())
    .getReader();
  const first = await lines.read();
  if (first.done) throw new Error("The relay mock exited before listening");
  const { url } = JSON.parse(first.value) as { url: string };
  return {
    url,
    async stop() {
      await child.stdin.close();
      const writes = new Map<string, TokenWrite>();
      for (let r = await lines.read(); !r.done; r = await lines.read()) {
        const write = JSON.parse(r.value) as TokenWrite;
        writes.set(write.text, write);
      }
      const status = await child.status;
      if (!status.success) {
        throw new Error(`The relay mock exited with code ${status.code}`);
      }
      return writes;
    },
  };
}

/** Splits a text stream into lines. */
export function lineSplitter(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream<string, string>({
    transform(chunk, controller) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const line of parts) if (line) controller.enqueue(line);
    },
    flush(controller) {
      if (rest) controller.enqueue(rest);
    },
  });
}

/** The text of the last user message of an OpenAI or Anthropic request. */
function lastUserText(request: RecordedRequest): string {
  const messages = request.body.messages as {
    role: string;
    content: string | { type: string; text?: string }[];
  }[];
  const last = messages.findLast((m) => m.role === "user");
  if (!last) return "";
  return typeof last.content === "string"
    ? last.content
    : last.content.map((part) => part.text ?? "").join("");
}

function turnFor(request: RecordedRequest): MockTurn {
  const ask = JSON.parse(lastUserText(request)) as RelayAsk;
  return {
    tokens: Array.from(
      { length: ask.tokens },
      (_, i) => `r${request.index}t${i} `,
    ),
    token_interval_ms: ask.interval_ms,
  };
}

if (import.meta.main) {
  const provider = Deno.args[0];
  const mock: MockLlmServer = provider === "anthropic"
    ? startMockAnthropic(turnFor)
    : startMockOpenAI(turnFor);
  console.log(JSON.stringify({ url: mock.url }));
  // Runs until the bench closes stdin.
  for await (const _ of Deno.stdin.readable) {
    // Nothing is sent on stdin; it only signals the end.
  }
  await mock.close();
  const out = mock.tokens.map((t) => JSON.stringify(t)).join("\n");
  await Deno.stdout.write(new TextEncoder().encode(out + "\n"));
}
