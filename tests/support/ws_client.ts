/**
 * A raw WebSocket test client: sends text or bytes, and hands out received
 * messages in order with a bounded wait.
 *
 * @module
 */

import type { Msg } from "./wire.ts";

/** A connected raw client. */
export interface RawWs {
  readonly socket: WebSocket;
  send(raw: string | Uint8Array): void;
  /** The next message, or a rejection after `timeoutMs`. */
  next(timeoutMs?: number): Promise<Msg>;
  /** Resolves when the socket has closed. */
  readonly closed: Promise<CloseEvent>;
  close(): Promise<void>;
}

/**
 * Opens a raw WebSocket client.
 *
 * @example
 * ```ts ignore
 * const ws = await openWs("ws://127.0.0.1:8787/a2e");
 * ```
 */
export async function openWs(url: string): Promise<RawWs> {
  const socket = new WebSocket(url);
  const inbox: Msg[] = [];
  const waiters: Array<(m: Msg) => void> = [];
  const closed = new Promise<CloseEvent>((resolve) => {
    socket.onclose = resolve;
  });
  socket.onmessage = (event) => {
    const msg = JSON.parse(String(event.data)) as Msg;
    const waiter = waiters.shift();
    if (waiter) waiter(msg);
    else inbox.push(msg);
  };
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error(`Cannot connect to "${url}"`));
  });
  return {
    socket,
    closed,
    send: (raw) => socket.send(raw),
    next(timeoutMs = 5000) {
      const ready = inbox.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise<Msg>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(done), 1);
          reject(new Error(`No message within ${timeoutMs} ms`));
        }, timeoutMs);
        const done = (m: Msg) => {
          clearTimeout(timer);
          resolve(m);
        };
        waiters.push(done);
      });
    },
    async close() {
      if (socket.readyState < WebSocket.CLOSING) socket.close();
      await closed;
    },
  };
}
