import assert from "node:assert/strict";
import { serveStdio } from "./stdio.ts";
import { Session } from "../session.ts";
import { Dispatcher } from "../dispatcher.ts";
import { defaultConfig } from "../config.ts";
import type {
  OpenSessionOptions,
  TransportContext,
} from "./transport_context.ts";
import { encodeEvent, encodeResponse } from "../../protocol/responses.ts";
import { toolOutcome } from "../../protocol/tool.ts";

const MiB = 1024 * 1024;

Deno.test("serveStdio() drops live events past 8 MiB unwritten, and ends the session past 64 MiB", () => {
  const logs: string[] = [];
  let session: Session | undefined;
  const open = (o: OpenSessionOptions) =>
    session = new Session({
      send: o.send,
      transport: o.transport,
      onEnd: o.onEnd,
    });
  const context: TransportContext = {
    dispatcher: new Dispatcher(),
    limits: defaultConfig().limits,
    admitSession: open,
    log: (line) => logs.push(line),
  };
  // An agent that never reads stdout (its writes never complete), and
  // whose stdin stays open.
  const written: number[] = [];
  const stdout = new WritableStream<Uint8Array>({
    write: (chunk) => {
      written.push(chunk.byteLength);
      return new Promise(() => {});
    },
  });
  const stdin = new ReadableStream<Uint8Array>();
  const served = serveStdio(context, { stdin, stdout });
  const big = "x".repeat(MiB);
  for (let seq = 0; seq < 40; seq++) {
    session!.send(encodeEvent("tool/event", "r", {
      kind: "log",
      data: { level: "info", message: big },
      seq,
    }));
  }
  assert.ok(logs.some((l) => /not keeping up/.test(l)), logs.join("\n"));
  assert.equal(session!.closed, false);
  // Answers are never dropped, until 64 MiB wait.
  for (let i = 0; i < 80 && !session!.closed; i++) {
    session!.send(encodeResponse("tool/call/req", `r${i}`, {
      result: toolOutcome({
        success: true,
        toolName: "t",
        data: big,
        durationMs: 1,
      }),
      createdAt: 0,
    }));
  }
  assert.equal(session!.closed, true);
  assert.ok(
    logs.some((l) => /stopped reading \(\d+ bytes waiting\)/.test(l)),
    logs.join("\n"),
  );
  // At most the first line reached the stalled writer; the rest waited.
  assert.ok(written.length <= 1, `${written.length} lines written`);
  void served;
});

Deno.test("serveStdio() answers an oversize line to the id in its first kilobytes", async () => {
  const context: TransportContext = {
    dispatcher: new Dispatcher({ maxMessageBytes: 1024 }),
    limits: defaultConfig().limits,
    admitSession: (o) =>
      new Session({ send: o.send, transport: o.transport, onEnd: o.onEnd }),
    log: () => {},
  };
  // Its id comes after 3,000 bytes of another field: the start kept of a
  // line over the limit must reach it, as an HTTP body's does.
  const line = `{"pad":"${"x".repeat(3000)}","type":"ping","id":"big-1"}\n`;
  let written = "";
  await serveStdio(context, {
    stdin: ReadableStream.from([new TextEncoder().encode(line)]),
    stdout: new WritableStream({
      write(chunk) {
        written += new TextDecoder().decode(chunk);
      },
    }),
  });
  const answer = JSON.parse(written);
  assert.equal(answer.type, "error");
  assert.equal(answer.req_id, "big-1");
  assert.match(answer.message, /exceeds the limit of 1024 bytes/);
});
