import assert from "node:assert/strict";
import { ControlSocket } from "./control_socket.ts";
import { settlesWithin } from "../deadline.ts";

const encoder = new TextEncoder();

async function connectWith(path: string, hello: string): Promise<Deno.Conn> {
  const conn = await Deno.connect({ transport: "unix", path });
  await conn.write(encoder.encode(hello));
  return conn;
}

// Reads until `bytes` bytes came or the connection ended.
async function readBytes(conn: Deno.Conn, bytes: number): Promise<Uint8Array> {
  const got = new Uint8Array(bytes);
  let at = 0;
  while (at < bytes) {
    const n = await conn.read(got.subarray(at));
    if (n === null) break;
    at += n;
  }
  return got.subarray(0, at);
}

async function ended(conn: Deno.Conn): Promise<boolean> {
  try {
    return await conn.read(new Uint8Array(1)) === null;
  } catch {
    return true;
  }
}

Deno.test("a connection without the nonce is closed and the process still gets its frames, in order", async () => {
  const control = new ControlSocket();
  try {
    control.accept("n0nce");
    control.write(encoder.encode("one\n"));
    const impostor = await connectWith(control.path, "guess\n");
    assert.ok(await ended(impostor), "the impostor was not closed");
    impostor.close();
    control.write(encoder.encode("two\n"));
    const conn = await connectWith(control.path, "n0nce\n");
    control.write(encoder.encode("three\n"));
    const got = new TextDecoder().decode(await readBytes(conn, 14));
    assert.equal(got, "one\ntwo\nthree\n");
    assert.ok(control.connected);
    conn.close();
  } finally {
    control.close();
  }
});

Deno.test("once the process is connected nothing else can connect, with or without the nonce", async () => {
  const control = new ControlSocket();
  try {
    control.accept("n0nce");
    const conn = await connectWith(control.path, "n0nce\n");
    control.write(encoder.encode("x\n"));
    await readBytes(conn, 2);
    await assert.rejects(
      Deno.connect({ transport: "unix", path: control.path }),
    );
    conn.close();
  } finally {
    control.close();
  }
});

Deno.test("a large frame arrives whole, before the frames written after it", async () => {
  const control = new ControlSocket();
  try {
    control.accept("n");
    const conn = await connectWith(control.path, "n\n");
    // Far more than a socket buffer: written in parts.
    const big = new Uint8Array(8 << 20).fill(97);
    big[big.length - 1] = 10;
    control.write(big);
    control.write(encoder.encode("after\n"));
    const got = await readBytes(conn, big.length + 6);
    assert.equal(got.length, big.length + 6);
    assert.ok(got.subarray(0, big.length).every((b, i) => b === big[i]));
    assert.equal(new TextDecoder().decode(got.subarray(big.length)), "after\n");
    conn.close();
  } finally {
    control.close();
  }
});

Deno.test("closed, it ends the process's connection, takes no new one, and drops later writes", async () => {
  const control = new ControlSocket();
  control.accept("n");
  const conn = await connectWith(control.path, "n\n");
  control.write(encoder.encode("a\n"));
  assert.equal(new TextDecoder().decode(await readBytes(conn, 2)), "a\n");
  control.close();
  control.write(encoder.encode("late\n"));
  assert.ok(await ended(conn));
  conn.close();
  await assert.rejects(
    Deno.connect({ transport: "unix", path: control.path }),
  );
  // Closed before anyone connected: the path is gone too.
  const unused = new ControlSocket();
  unused.accept("n");
  unused.close();
  await assert.rejects(Deno.connect({ transport: "unix", path: unused.path }));
});

// Whether the peer closed `conn` within a bound (a kept connection would
// otherwise hang the test).
function endsSoon(conn: Deno.Conn): Promise<boolean> {
  return settlesWithin(ended(conn), 5_000);
}

Deno.test("a connection that never says a nonce is closed once the process is found, and when the socket closes", async () => {
  const control = new ControlSocket();
  try {
    control.accept("n");
    const silent = await Deno.connect({
      transport: "unix",
      path: control.path,
    });
    const conn = await connectWith(control.path, "n\n");
    control.write(encoder.encode("x\n"));
    await readBytes(conn, 2);
    assert.ok(await endsSoon(silent), "the silent connection was kept open");
    silent.close();
    conn.close();
  } finally {
    control.close();
  }
  const other = new ControlSocket();
  other.accept("n");
  const silent = await Deno.connect({ transport: "unix", path: other.path });
  // Connections are taken in order: once a later one is answered (closed,
  // without the nonce), the silent one has been taken too.
  const wrong = await connectWith(other.path, "wrong\n");
  assert.ok(await endsSoon(wrong));
  wrong.close();
  other.close();
  assert.ok(await endsSoon(silent), "close left a connection open");
  silent.close();
});
