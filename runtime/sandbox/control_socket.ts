/**
 * The host's end of a sandbox process's control socket: the Unix socket
 * the host writes its frames to once the process is started (see
 * `protocol/sandbox/control.ts` for why a socket and not stdin).
 *
 * The socket lives in the host's private socket folder (mode 0700) and is
 * bound into the process's namespace alone. A connection counts only once
 * its first line is the process's nonce, which the process read from its
 * stdin pipe: whoever else might reach the path cannot take the process's
 * place. The first such connection is kept and the listener closed, so
 * nothing (no worker of that process either) can connect afterwards.
 *
 * @module
 */

import { privateSocketPath } from "../private_sockets.ts";

// A nonce line is 33 bytes; anything longer is not one.
const MAX_HELLO = 256;

/**
 * One process's control socket: listens until {@link ControlSocket.accept}
 * finds the process, then writes frames to it in order.
 *
 * @example The process connects, says its nonce, and reads a frame
 * ```ts
 * import { ControlSocket } from "./control_socket.ts";
 * import assert from "node:assert/strict";
 * const control = new ControlSocket();
 * control.accept("n0");
 * control.write(new TextEncoder().encode("frame\n"));
 * const conn = await Deno.connect({ transport: "unix", path: control.path });
 * await conn.write(new TextEncoder().encode("n0\n"));
 * const buf = new Uint8Array(16);
 * const n = await conn.read(buf);
 * assert.equal(new TextDecoder().decode(buf.subarray(0, n ?? 0)), "frame\n");
 * conn.close();
 * control.close();
 * ```
 */
export class ControlSocket {
  /** The socket's path (the process is told it, and has it bound in). */
  readonly path: string;
  readonly #listener: Deno.UnixListener;
  #listening = true;
  #conn: Deno.UnixConn | null = null;
  // Frames written before the process connected, or while one is on its way.
  #queue: Uint8Array[] = [];
  #current: Uint8Array | null = null;
  // Connections that have not said a nonce yet: closed once the process
  // is found, or the socket closed, so none is held open by its peer.
  readonly #greeting = new Set<Deno.UnixConn>();
  #closed = false;

  constructor() {
    this.path = privateSocketPath();
    this.#listener = Deno.listen({ transport: "unix", path: this.path });
  }

  /** Whether the process has connected. */
  get connected(): boolean {
    return this.#conn !== null;
  }

  /**
   * Starts taking connections: the first whose first line is `nonce` is the
   * process's; others are closed.
   *
   * @param nonce the process's nonce
   */
  accept(nonce: string): void {
    (async () => {
      for await (const conn of this.#listener) {
        this.#greeting.add(conn);
        this.#hello(conn, nonce);
      }
    })().catch(() => {
      // The listener was closed.
    });
  }

  /**
   * Writes one frame (or several) after all those before it.
   *
   * @param bytes the framed lines; not changed afterwards by the caller
   */
  write(bytes: Uint8Array): void {
    if (this.#closed) return;
    if (this.#conn === null || this.#current !== null) {
      this.#queue.push(bytes);
      return;
    }
    this.#send(bytes);
  }

  /** Stops listening and closes the connection (the process reads its end). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#stopListening();
    closeQuietly(this.#conn);
  }

  async #hello(conn: Deno.UnixConn, nonce: string): Promise<void> {
    const expected = new TextEncoder().encode(nonce + "\n");
    const got = new Uint8Array(MAX_HELLO);
    let at = 0;
    try {
      while (at < expected.length) {
        const n = await conn.read(got.subarray(at));
        if (n === null) break;
        at += n;
      }
    } catch {
      // Gone: not the process.
    }
    this.#greeting.delete(conn);
    const same = at === expected.length &&
      expected.every((byte, i) => got[i] === byte);
    if (!same || this.#conn !== null || this.#closed) {
      closeQuietly(conn);
      return;
    }
    this.#conn = conn;
    this.#stopListening();
    this.#next();
  }

  #send(bytes: Uint8Array): void {
    this.#current = bytes;
    this.#conn!.write(bytes).then(this.#wrote, this.#failed);
  }

  // Arrow functions: one per socket, not one per write.
  #wrote = (n: number): void => {
    if (this.#closed) return;
    const rest = this.#current!.subarray(n);
    if (rest.length > 0) return this.#send(rest);
    this.#current = null;
    this.#next();
  };

  #failed = (): void => {
    // The process is gone; its exit is seen on its pipes.
    this.close();
  };

  #next(): void {
    const bytes = this.#queue.shift();
    if (bytes !== undefined) this.#send(bytes);
  }

  #stopListening(): void {
    for (const conn of this.#greeting) closeQuietly(conn);
    this.#greeting.clear();
    if (!this.#listening) return;
    this.#listening = false;
    try {
      this.#listener.close();
    } catch {
      // Closed already.
    }
    try {
      Deno.removeSync(this.path);
    } catch {
      // Removed with the listener.
    }
  }
}

function closeQuietly(conn: Deno.Conn | null): void {
  try {
    conn?.close();
  } catch {
    // Closed already.
  }
}
