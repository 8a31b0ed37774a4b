import assert from "node:assert/strict";
import { Hono } from "hono";
import { closeReason, websocketHandler } from "./websocket.ts";
import type { TransportContext } from "./transport_context.ts";
import { Session } from "../session.ts";

// A host with one route, `/a2e`, whose sessions the test ends itself.
function serveA2e() {
  // Each session, and a promise kept once it reads its first message.
  const sessions: { session: Session; heard: Promise<void> }[] = [];
  const hear = new Map<Session, () => void>();
  const context = {
    dispatcher: {
      receive: (session: Session) => hear.get(session)?.(),
      rejectBinary() {},
    },
    limits: {},
    log() {},
    admitSession(options: ConstructorParameters<typeof Session>[0]) {
      const session = new Session(options);
      const heard = new Promise<void>((resolve) => hear.set(session, resolve));
      sessions.push({ session, heard });
      return session;
    },
  } as unknown as TransportContext;
  const app = new Hono().get("/a2e", websocketHandler(context));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    app.fetch,
  );
  return { server, sessions };
}

Deno.test("websocketHandler() cuts a session's end reason to 123 bytes of UTF-8 without splitting a character", async (t) => {
  const { server, sessions } = serveA2e();
  try {
    for (
      const [label, reason, expected] of [
        ["two-byte characters", "é".repeat(100), "é".repeat(61)],
        ["four-byte characters", "a" + "😀".repeat(40), "a" + "😀".repeat(30)],
        ["a short reason", "Host closing", "Host closing"],
      ] as const
    ) {
      await t.step(label, async () => {
        const before = sessions.length;
        const ws = new WebSocket(`ws://127.0.0.1:${server.addr.port}/a2e`);
        const closed = new Promise<CloseEvent>((resolve) =>
          ws.onclose = resolve
        );
        await new Promise((resolve) => ws.onopen = resolve);
        ws.send("{}"); // the server's socket is open once it reads this
        const { session, heard } = sessions[before]!;
        await heard;
        session.close(reason!);
        const event = await closed;
        assert.equal(event.code, 1000);
        assert.equal(event.reason, expected);
      });
    }
  } finally {
    await server.shutdown();
  }
});

Deno.test("closeReason() keeps whole characters within 123 bytes", () => {
  assert.equal(closeReason("ok"), "ok");
  assert.equal(closeReason("x".repeat(200)), "x".repeat(123));
  assert.equal(closeReason("é".repeat(62)), "é".repeat(61));
  assert.equal(closeReason("ab" + "😀".repeat(40)), "ab" + "😀".repeat(30));
  // A lone surrogate is sent as U+FFFD, three bytes.
  assert.equal(
    new TextEncoder().encode(closeReason("\ud800".repeat(60))).length <= 123,
    true,
  );
});
