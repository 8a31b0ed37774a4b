import assert from "node:assert/strict";
import {
  decodeDiscoveryFrame,
  decodeHostMessage,
  decodeSandboxMessage,
  decodeWorkerMessage,
  encodeFrame,
  FrameSplitter,
  makeNonce,
  readFrames,
  type ReadFramesOptions,
} from "./pipe.ts";

async function collect(
  chunks: (string | Uint8Array)[],
  options: ReadFramesOptions,
): Promise<unknown[]> {
  const encoder = new TextEncoder();
  const stream = ReadableStream.from(
    chunks.map((c) => typeof c === "string" ? encoder.encode(c) : c),
  );
  const out: unknown[] = [];
  await readFrames(stream, (m) => out.push(m), options);
  return out;
}

Deno.test("readFrames() keeps only lines with the nonce, across chunk splits", async () => {
  const nonce = makeNonce();
  const frame = encodeFrame(nonce, '{"t":"a"}');
  const got = await collect([
    'forged {"t":"x"}\n',
    frame.slice(0, 10),
    frame.slice(10),
    "junk-no-newline",
    encodeFrame(nonce, '{"t":"b"}'),
  ], { nonce });
  assert.deepEqual(got, [{ t: "a" }, { t: "b" }]);
});

Deno.test("readFrames() drops over-long lines without holding them", async () => {
  const nonce = "N";
  const big = "x".repeat(1000);
  const got = await collect(
    [big, big, `N{"t":"late"}\n`, 'N{"t":"ok"}\n'],
    { nonce, maxLineBytes: 100 },
  );
  assert.deepEqual(got, [{ t: "ok" }]);
});

Deno.test("readFrames() treats bad JSON after the nonce as noise", async () => {
  const got = await collect(['N{"t":\n', 'N{"t":1}\n'], { nonce: "N" });
  assert.deepEqual(got, [{ t: 1 }]);
});

Deno.test("FrameSplitter keeps a partial line when the caller reuses its buffer", () => {
  const got: unknown[] = [];
  const splitter = new FrameSplitter((m) => got.push(m), { nonce: "N" });
  const bytes = new TextEncoder().encode('N{"a":"xyz"}\nN{"b":2}\n');
  const buffer = new Uint8Array(5);
  for (let at = 0; at < bytes.length; at += buffer.length) {
    const part = bytes.subarray(at, at + buffer.length);
    buffer.set(part);
    splitter.push(buffer.subarray(0, part.length));
    buffer.fill(0x7a); // what the next read would overwrite
  }
  assert.deepEqual(got, [{ a: "xyz" }, { b: 2 }]);
});

Deno.test("readFrames() parses a last line that has no newline", async () => {
  const got = await collect(['N{"t":1}\nN{"t":2}'], { nonce: "N" });
  assert.deepEqual(got, [{ t: 1 }, { t: 2 }]);
});

Deno.test("readFrames() asks for the next read only once its hold settles", async () => {
  const encoder = new TextEncoder();
  const lines = ['N{"t":1}\n', 'N{"t":2}\n'];
  let pulls = 0;
  // Pulled only when read (no high-water mark): `pulls` counts the reads.
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      const line = lines.shift();
      if (line === undefined) controller.close();
      else controller.enqueue(encoder.encode(line));
    },
  }, { highWaterMark: 0 });
  const got: unknown[] = [];
  const release = Promise.withResolvers<void>();
  let holds = 0;
  const done = readFrames(stream, (m) => got.push(m), {
    nonce: "N",
    hold: () => holds++ === 0 ? release.promise : null,
  });
  // Let the first read and every turn after it run: the second read waits.
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(got, [{ t: 1 }]);
  assert.equal(pulls, 1);
  release.resolve();
  await done;
  assert.deepEqual(got, [{ t: 1 }, { t: 2 }]);
  assert.equal(pulls, 3);
});

Deno.test("decodeSandboxMessage() turns an unknown error code into sandbox_crash", () => {
  const msg = decodeSandboxMessage({
    t: "result",
    id: "1",
    ok: false,
    code: "made_up",
    message: "x",
    retryable: "yes",
  });
  assert.deepEqual(msg, {
    t: "result",
    id: "1",
    ok: false,
    code: "sandbox_crash",
    message: "x",
    retryable: false,
  });
});

Deno.test("decodeSandboxMessage() drops frames without a string id or a known type", () => {
  assert.equal(decodeSandboxMessage(null), null);
  assert.equal(decodeSandboxMessage([1]), null);
  assert.equal(decodeSandboxMessage({ t: "event", id: 3 }), null);
  assert.equal(decodeSandboxMessage({ t: "op", id: "3" }), null);
  assert.deepEqual(decodeSandboxMessage({ t: "event", id: "3", kind: 1 }), {
    t: "event",
    id: "3",
    kind: "1",
    data: {},
  });
});

Deno.test("decodeWorkerMessage() checks what a hostile worker posts", () => {
  assert.equal(decodeWorkerMessage({ t: "rpc", rid: 1 }), null);
  assert.equal(decodeWorkerMessage({ t: "init", nonce: "x" }), null);
  assert.deepEqual(
    decodeWorkerMessage({ t: "rpc", id: "2", rid: "4", method: "exec" }),
    { t: "rpc", id: "2", rid: 4, method: "tool", payload: undefined },
  );
  assert.deepEqual(
    decodeWorkerMessage({
      t: "events",
      batch: [null, { id: 1 }, { id: "a", kind: "log", data: [1] }],
    }),
    { t: "events", batch: [{ id: "a", kind: "log", data: {} }] },
  );
  assert.deepEqual(decodeWorkerMessage({ t: "events", batch: "x" }), {
    t: "events",
    batch: [],
  });
  // What String() and Number() throw on (structured clone keeps these
  // properties) reads as "(not text)" and no number, never a throw.
  const hostile = { toString: 1, valueOf: 1 };
  assert.deepEqual(
    decodeWorkerMessage({ t: "load_error", message: hostile }),
    { t: "load_error", message: "(not text)" },
  );
  assert.deepEqual(
    decodeWorkerMessage({
      t: "result",
      ok: false,
      id: "1",
      code: hostile,
      message: hostile,
    }),
    {
      t: "result",
      ok: false,
      id: "1",
      code: "(not text)",
      message: "(not text)",
    },
  );
  assert.deepEqual(decodeWorkerMessage({ t: "exit", code: hostile }), {
    t: "exit",
    code: NaN,
  });
});

Deno.test("decodeHostMessage() keeps an operation whole for the worker", () => {
  const op = {
    t: "op",
    id: "1",
    op: "call",
    path: "/s/a.ts",
    export: "default",
    workerKey: "k",
    args: { a: 1 },
    config: {},
    metadata: {},
    session: "s",
    call: "c",
  };
  assert.equal(decodeHostMessage(op), op);
  assert.equal(decodeHostMessage({ ...op, path: 1 }), null);
});

Deno.test("decodeHostMessage() reads prime, end_session and stats, and drops them malformed", () => {
  assert.deepEqual(
    decodeHostMessage({ t: "prime", primeKey: "/m.ts\u0000v1", path: "/m.ts" }),
    { t: "prime", primeKey: "/m.ts\u0000v1", path: "/m.ts" },
  );
  assert.equal(
    decodeHostMessage({ t: "prime", primeKey: 1, path: "/m" }),
    null,
  );
  assert.deepEqual(decodeHostMessage({ t: "end_session", session: "s1" }), {
    t: "end_session",
    session: "s1",
  });
  assert.equal(decodeHostMessage({ t: "end_session" }), null);
  assert.deepEqual(decodeHostMessage({ t: "stats", id: "9", session: "s" }), {
    t: "stats",
    id: "9",
    session: "s",
  });
  assert.deepEqual(decodeHostMessage({ t: "stats", id: "9", session: 3 }), {
    t: "stats",
    id: "9",
  });
  assert.equal(decodeHostMessage({ t: "stats" }), null);
});

Deno.test("decodeSandboxMessage() reads stats with counts a hostile process cannot make odd", () => {
  assert.deepEqual(
    decodeSandboxMessage({
      t: "stats",
      id: "1",
      workers: 3,
      sessionWorkers: 1,
    }),
    { t: "stats", id: "1", workers: 3, sessionWorkers: 1 },
  );
  assert.deepEqual(
    decodeSandboxMessage({
      t: "stats",
      id: "1",
      workers: -1,
      sessionWorkers: "x",
    }),
    { t: "stats", id: "1", workers: 0, sessionWorkers: 0 },
  );
  assert.equal(decodeSandboxMessage({ t: "stats", workers: 1 }), null);
});

Deno.test("decoders copy only their table's fields from a hostile side, and know no inherited type", () => {
  const extra = { t: "stopped", id: "1", __proto__: { polluted: true }, x: 1 };
  assert.deepEqual(decodeSandboxMessage(extra), { t: "stopped", id: "1" });
  assert.deepEqual(
    decodeWorkerMessage({ t: "aborted", id: "2", value: "forged" }),
    { t: "aborted", id: "2" },
  );
  for (const t of ["toString", "__proto__", "constructor", 1, null]) {
    assert.equal(decodeSandboxMessage({ t, id: "1" }), null);
    assert.equal(decodeWorkerMessage({ t, id: "1" }), null);
    assert.equal(decodeHostMessage({ t, id: "1" }), null);
  }
});

Deno.test("decodeHostMessage() refuses an operation its table refuses, and copies one it must mend", () => {
  const op = {
    t: "op",
    id: "1",
    op: "call",
    path: "/s/a.ts",
    export: "default",
    workerKey: "k",
    args: null,
    config: {},
    metadata: {},
    session: "s",
    call: "c",
  };
  assert.equal(decodeHostMessage({ ...op, op: "exec" }), null);
  assert.equal(decodeHostMessage({ ...op, export: 1 }), null);
  assert.equal(decodeHostMessage({ ...op, primeKey: "p" })?.t, "op");
  const mended = decodeHostMessage({ ...op, config: [1], primeKey: 2 });
  assert.deepEqual(mended, { ...op, config: {} });
});

Deno.test("decodeDiscoveryFrame() reads both answers and refuses odd indexes and times", () => {
  assert.deepEqual(
    decodeDiscoveryFrame({ t: "described", i: 0, ok: true, value: [1] }, 1),
    { t: "described", i: 0, ok: true, value: [1] },
  );
  assert.deepEqual(
    decodeDiscoveryFrame({ t: "described", i: 0, ok: "no", message: 5 }, 1),
    { t: "described", i: 0, ok: false, message: "5" },
  );
  assert.equal(
    decodeDiscoveryFrame({ t: "described", i: 1, ok: true }, 1),
    null,
  );
  assert.equal(decodeDiscoveryFrame({ t: "started", i: 0.5 }, 2), null);
  assert.equal(decodeDiscoveryFrame({ t: "started", i: -1 }, 2), null);
  assert.equal(decodeDiscoveryFrame({ t: "done", cpuMs: -1 }, 2), null);
  assert.equal(decodeDiscoveryFrame({ t: "done", cpuMs: Infinity }, 2), null);
});

// A sandbox's stdout is shared with its untrusted code, which can print
// as many lines as it likes: each line the host decodes (and each parse
// failure it throws and catches) costs it microseconds, so lines of
// newlines in a loop held the host's thread for a quarter of a second a
// 64 KiB chunk. A line that cannot be a frame is told from its bytes.
Deno.test("FrameSplitter tells noise lines that cannot be frames without decoding them", () => {
  const nonce = makeNonce();
  const got: unknown[] = [];
  const splitter = new FrameSplitter((m) => got.push(m), { nonce });
  const decode = TextDecoder.prototype.decode;
  let decoded = 0;
  TextDecoder.prototype.decode = function (...args) {
    decoded++;
    return decode.apply(this, args);
  };
  try {
    // Each line fails one check only: too short to hold the nonce and an
    // object (the second even ends in "}"), or not ending in "}".
    const noiseLines = "\n" + '{"t":"x"}\n' + "a line printed by a skill\n" +
      `${nonce.slice(0, 20)}\n` +
      "a line printed by a skill, longer than any nonce\n" +
      '{"t":"ready"}' + "garbage".repeat(4) + "\n";
    splitter.push(new TextEncoder().encode(noiseLines.repeat(1000)));
    assert.equal(decoded, 0);
    assert.deepEqual(got, []);
    splitter.push(new TextEncoder().encode(encodeFrame(nonce, '{"t":"ok"}')));
    assert.deepEqual(got, [{ t: "ok" }]);
  } finally {
    TextDecoder.prototype.decode = decode;
  }
});
