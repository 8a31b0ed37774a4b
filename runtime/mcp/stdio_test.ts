import assert from "node:assert/strict";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type ByteSource, StdioLineTransport } from "./stdio.ts";

const encoder = new TextEncoder();

/** A source that yields the given chunks, then waits for `end()`. */
function chunks(...parts: string[]) {
  const queue = parts.map((p) => encoder.encode(p));
  const ended = Promise.withResolvers<null>();
  const source: ByteSource = {
    read(buffer) {
      const next = queue.shift();
      if (next === undefined) return ended.promise;
      buffer.set(next);
      return Promise.resolve(next.length);
    },
  };
  return { source, end: () => ended.resolve(null) };
}

function sink() {
  const lines: unknown[] = [];
  let text = "";
  return {
    lines,
    output: {
      writeSync(bytes: Uint8Array) {
        text += new TextDecoder().decode(bytes);
        const at = text.lastIndexOf("\n");
        for (const line of text.slice(0, at + 1).split("\n")) {
          if (line !== "") lines.push(JSON.parse(line));
        }
        text = text.slice(at + 1);
        return bytes.length;
      },
    },
  };
}

async function run(transport: StdioLineTransport, end: () => void) {
  const messages: JSONRPCMessage[] = [];
  const errors: string[] = [];
  const closed = Promise.withResolvers<void>();
  transport.onmessage = (m) => messages.push(m);
  transport.onerror = (e) => errors.push(e.message);
  transport.onclose = () => closed.resolve();
  await transport.start();
  end();
  await closed.promise;
  return { messages, errors };
}

Deno.test("StdioLineTransport hands over messages split across reads, CRLF or not", async () => {
  const input = chunks(
    '{"jsonrpc":"2.0","id":1,"met',
    'hod":"ping"}\r\n\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
  );
  const { messages, errors } = await run(
    new StdioLineTransport({ input: input.source, output: sink().output }),
    input.end,
  );
  assert.deepEqual(messages, [
    { jsonrpc: "2.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", method: "notifications/initialized" },
  ]);
  assert.deepEqual(errors, []);
});

Deno.test("StdioLineTransport answers a line that is not JSON, or too long, and goes on", async () => {
  const input = chunks(
    "{oops\n",
    `{"jsonrpc":"2.0","id":2,"method":"${"x".repeat(100)}"}\n`,
    '{"jsonrpc":"2.0","id":3,"method":"ping"}\n',
  );
  const out = sink();
  const { messages, errors } = await run(
    new StdioLineTransport({
      input: input.source,
      output: out.output,
      maxLineBytes: 64,
    }),
    input.end,
  );
  assert.deepEqual(messages, [{ jsonrpc: "2.0", id: 3, method: "ping" }]);
  assert.equal(errors.length, 2);
  const [parse, large] = out.lines as {
    id: null;
    error: { code: number; message: string };
  }[];
  assert.equal(parse!.id, null);
  assert.equal(parse!.error.code, -32700);
  assert.match(parse!.error.message, /^Parse error: /);
  assert.equal(large!.id, null);
  assert.equal(large!.error.code, -32600);
  assert.equal(large!.error.message, "Message too large: 136 bytes (limit 64)");
});

Deno.test("StdioLineTransport writes whole lines in order, even when the sink takes a few bytes at a time", async () => {
  const written: string[] = [];
  const transport = new StdioLineTransport({
    input: chunks().source,
    output: {
      writeSync(bytes) {
        const n = Math.min(3, bytes.length);
        written.push(new TextDecoder().decode(bytes.subarray(0, n)));
        return n;
      },
    },
  });
  await transport.send({ jsonrpc: "2.0", id: 1, result: {} });
  await transport.send({ jsonrpc: "2.0", method: "notifications/x" });
  assert.equal(
    written.join(""),
    '{"jsonrpc":"2.0","id":1,"result":{}}\n' +
      '{"jsonrpc":"2.0","method":"notifications/x"}\n',
  );
});

Deno.test("StdioLineTransport closes once when its output breaks, and sends nothing after", async () => {
  let writes = 0;
  const transport = new StdioLineTransport({
    input: chunks().source,
    output: {
      writeSync() {
        writes++;
        throw new Deno.errors.BrokenPipe("Broken pipe");
      },
    },
  });
  let closes = 0;
  const errors: string[] = [];
  transport.onclose = () => closes++;
  transport.onerror = (e) => errors.push(e.message);
  await transport.send({ jsonrpc: "2.0", id: 1, result: {} });
  await transport.send({ jsonrpc: "2.0", id: 2, result: {} });
  await transport.close();
  assert.equal(writes, 1);
  assert.equal(closes, 1);
  assert.deepEqual(errors, ["Broken pipe"]);
});

Deno.test("StdioLineTransport refuses a second start", async () => {
  const transport = new StdioLineTransport({
    input: chunks().source,
    output: sink().output,
  });
  await transport.start();
  assert.throws(() => transport.start(), /started already/);
  await transport.close();
});

Deno.test("StdioLineTransport answers JSON that is no JSON-RPC message when it has an id, and goes on", async () => {
  // The SDK's Server drops a message its schemas refuse (an extra field,
  // params that are no object, another jsonrpc): the client would wait
  // for an answer forever.
  const input = chunks(
    '{"jsonrpc":"2.0","id":4,"method":"ping","extra":1}\n',
    '{"jsonrpc":"2.0","id":"five","method":"prompts/get","params":"x"}\n',
    '{"jsonrpc":"1.0","id":6,"method":"ping"}\n',
    '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"progressToken":1.5}}}\n',
    '{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n',
    "[]\n",
    '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}\n',
    '{"jsonrpc":"2.0","id":9,"result":{}}\n',
  );
  const out = sink();
  const { messages } = await run(
    new StdioLineTransport({ input: input.source, output: out.output }),
    input.end,
  );
  // No id to answer: the SDK sees them, and logs them, as before.
  assert.deepEqual(messages, [
    { jsonrpc: "2.0", id: 1.5, method: "ping" },
    [],
    {
      jsonrpc: "2.0",
      id: 8,
      method: "tools/call",
      params: { name: "t", _meta: { progressToken: "p" } },
    },
    { jsonrpc: "2.0", id: 9, result: {} },
  ]);
  const answers = out.lines as {
    id: unknown;
    error: { code: number; message: string };
  }[];
  assert.deepEqual(answers.map((a) => a.id), [4, "five", 6, 7]);
  for (const answer of answers) {
    assert.equal(answer.error.code, -32600);
    assert.match(answer.error.message, /^Invalid Request: /);
  }
});
