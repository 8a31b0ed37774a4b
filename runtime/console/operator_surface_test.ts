import assert from "node:assert/strict";
import { createOperatorSurface } from "./operator_surface.ts";
import { defaultConfig } from "../config.ts";

Deno.test("/metrics counts the live sessions by their transport", async () => {
  const session = (id: string, transport: string) => ({
    id,
    token: "",
    state: new Map(),
    send() {},
    signal: new AbortController().signal,
    transport,
    inFlight: 0,
  });
  const operator = createOperatorSurface({
    config: { ...defaultConfig(), store: null },
    sessions: () => [
      session("a", "websocket"),
      session("b", "sse"),
      session("c", "websocket"),
    ],
    processes: () => [],
    request: () => Promise.reject(new Error("not here")),
  });
  try {
    const text = await (await operator.app.request("/metrics")).text();
    assert.match(text, /^skillbox_sessions\{transport="websocket"\} 2$/m);
    assert.match(text, /^skillbox_sessions\{transport="sse"\} 1$/m);
  } finally {
    await operator.close();
  }
});
