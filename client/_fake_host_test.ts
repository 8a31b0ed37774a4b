/**
 * A tiny scripted A2E host for the client's tests: raw JSON over a real
 * WebSocket (Deno.serve + Deno.upgradeWebSocket), no project code, so the
 * tests check the client against the wire contract rather than against
 * itself.
 *
 * @module
 */

/** A raw message as the fake host sees it. */
export type Raw = Record<string, unknown> & { type: string; id: string };

/** Options of {@link startFakeHost}. */
export interface FakeHostOptions {
  /** Answer the handshake with `ok: false` and this reason. */
  refuse?: string;
  /** Extra fields merged into `handshake/resp`. */
  handshake?: Record<string, unknown>;
}

/** A running fake host. */
export interface FakeHost {
  url: string;
  /** Waits for the next message the client sends after the handshake. */
  next(): Promise<Raw>;
  /** Sends a message (envelope added) to the connected client. */
  send(type: string, fields: Record<string, unknown>): void;
  /** Sends a raw text frame. */
  sendRaw(text: string): void;
  /** Closes the server side of the socket. */
  closeSocket(code?: number, reason?: string): void;
  /** Settles when the client's socket has closed. */
  socketClosed: Promise<void>;
  /** The handshake request the client sent. */
  handshake: Promise<Raw>;
  shutdown(): Promise<void>;
}

/** Starts a fake host on a free port; it serves one connection. */
export function startFakeHost(options: FakeHostOptions = {}): FakeHost {
  const queue: Raw[] = [];
  const waiters: ((msg: Raw) => void)[] = [];
  const handshake = Promise.withResolvers<Raw>();
  const socketClosed = Promise.withResolvers<void>();
  let socket: WebSocket | undefined;

  const send = (type: string, fields: Record<string, unknown>) => {
    socket!.send(JSON.stringify({
      type,
      id: crypto.randomUUID().replaceAll("-", ""),
      version: "1.0",
      ts: Date.now() / 1000 + 0.001,
      ...fields,
    }));
  };

  const server = Deno.serve({ port: 0, onListen() {} }, (request) => {
    const upgrade = Deno.upgradeWebSocket(request);
    socket = upgrade.socket;
    socket.onclose = () => socketClosed.resolve();
    socket.onmessage = (event) => {
      const msg = JSON.parse(event.data) as Raw;
      if (msg.type === "handshake/req") {
        handshake.resolve(msg);
        send("handshake/resp", {
          req_id: msg.id,
          session_id: "5e55105e55105e55105e55105e55105e",
          accepted_caps: [
            { capability: "tools", enabled: true, metadata: {} },
            { capability: "skill", enabled: true, metadata: {} },
          ],
          max_parallel: 8,
          ok: options.refuse === undefined,
          reason: options.refuse ?? "",
          ...options.handshake,
        });
        return;
      }
      const waiter = waiters.shift();
      if (waiter) waiter(msg);
      else queue.push(msg);
    };
    return upgrade.response;
  });

  return {
    url: `ws://127.0.0.1:${server.addr.port}/a2e`,
    next: () => {
      const msg = queue.shift();
      if (msg) return Promise.resolve(msg);
      return new Promise((resolve) => waiters.push(resolve));
    },
    send,
    sendRaw: (text) => socket!.send(text),
    closeSocket: (code = 1000, reason = "") => socket!.close(code, reason),
    socketClosed: socketClosed.promise,
    handshake: handshake.promise,
    shutdown: () => server.shutdown(),
  };
}
