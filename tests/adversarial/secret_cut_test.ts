/**
 * A toolkit secret cut in two: a server the http toolkit may reach echoes
 * the secret header it was sent, placed so that `max_body_bytes` cuts
 * through it. The start of the secret left at the end of the body is not
 * the whole secret, so scrubbing whole secrets alone let it through. What
 * the client gets and what the run history keeps must show no part of it.
 * Against a real host, configured as an operator would.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createHost, type Host } from "../../runtime/host.ts";
import type { ToolOutcome } from "../../protocol/tool.ts";
import { CONFINEMENT_MODE } from "./_confined.ts";

const TOKEN = "tok-7Qm2xV9pL4sK8dR3wZ6n";
const AUTH = `Bearer ${TOKEN}`;
// Bytes before the echoed secret.
const PAD = 100;

interface Fixture {
  host: Host;
  base: string;
  close(): Promise<void>;
}

/**
 * A host whose operator configured the http toolkit with a secret header
 * and a body cap, and a loopback server that echoes the header after PAD
 * bytes: `/echo` the whole value, `/token` the token alone, `/bin` the
 * whole value in a binary body.
 */
async function start(maxBody: number): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "secret_cut_" });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      const auth = req.headers.get("authorization") ?? "";
      const path = new URL(req.url).pathname;
      const echoed = path === "/token"
        ? auth.replace(/^Bearer /, "")
        : path === "/hex"
        ? hexEscaped(auth)
        : auth;
      const body = "x".repeat(PAD) + echoed + "y".repeat(PAD);
      return new Response(body, {
        headers: {
          "content-type": path === "/bin"
            ? "application/octet-stream"
            : "text/plain",
        },
      });
    },
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  const host = createHost({
    config: {
      skills: [],
      sandbox: {
        cacheDir: null,
        memoryMb: 256,
        maxIdleProcesses: 8,
        spareWorkers: 1,
        maxResultBytes: 1 << 20,
        confinement: CONFINEMENT_MODE,
      },
      egress: {
        allowPrivateHosts: ["127.0.0.1"],
        secrets: [],
        maxResponseBytes: 1 << 20,
        timeoutSeconds: 10,
      },
      policy: { permissions: { net: ["127.0.0.1"] } },
      toolkits: {
        http: {
          allowed_hosts: ["127.0.0.1"],
          headers: { Authorization: AUTH },
          max_body_bytes: maxBody,
        },
      },
      store: { path: join(dir, "runs.db"), maxRuns: 1000, maxAgeDays: 1 },
    },
  });
  await host.ready;
  return {
    host,
    base,
    async close() {
      await host.close({ timeoutSeconds: 1 });
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Every run in the history, in full, as the console's API shows it. */
async function history(host: Host): Promise<string> {
  const get = async (path: string) => {
    const res = await host.fetch(new Request(`http://127.0.0.1${path}`));
    assert.equal(res.status, 200, path);
    return await res.text();
  };
  const page = JSON.parse(await get("/api/runs?limit=200"));
  const parts = [JSON.stringify(page)];
  for (const run of page.runs as { id: string }[]) {
    parts.push(await get(`/api/runs/${run.id}`));
  }
  return parts.join("\n");
}

/** Asserts that no four characters in a row of the token show. */
function assertNoPart(text: string, where: string): void {
  for (let i = 0; i + 4 <= TOKEN.length; i++) {
    const part = TOKEN.slice(i, i + 4);
    assert.ok(
      !text.includes(part),
      `${where} shows "${part}" of the token: ${text.slice(0, 600)}`,
    );
  }
}

// Every character as a "\x" escape of its byte, as JavaScript writes it:
// a form only the egress broker knows, not the http toolkit.
function hexEscaped(text: string): string {
  return Array.from(text, (c) => `\\x${c.charCodeAt(0).toString(16)}`)
    .join("");
}

// Cuts that leave "Bearer " and 4, 11 or all but one of the token's
// characters at the end of the body.
const CUTS = [4, 11, TOKEN.length - 1].map((n) => PAD + "Bearer ".length + n);

Deno.test("a secret header echoed across max_body_bytes shows no part of it to the client or in the history", async () => {
  for (const cut of CUTS) {
    const f = await start(cut);
    try {
      const result: ToolOutcome = await f.host.callTool("http_request", {
        url: `${f.base}/echo`,
      });
      assert.equal(result.success, true, String(result.error));
      const data = result.data as { body: string; truncated: boolean };
      assert.equal(data.truncated, true);
      assert.ok(data.body.startsWith("x".repeat(PAD)), data.body);
      assertNoPart(JSON.stringify(result), `the result cut at ${cut}`);
      assertNoPart(await history(f.host), `the history cut at ${cut}`);
    } finally {
      await f.close();
    }
  }
});

Deno.test("the token alone, echoed across max_body_bytes, shows no part of it", async () => {
  // The host knows the header's value, "Bearer <token>": only the tool
  // knows the token alone is a form of it, so the tool cuts it out itself.
  for (const cut of CUTS.map((n) => n - "Bearer ".length)) {
    const f = await start(cut);
    try {
      const result = await f.host.callTool("http_request", {
        url: `${f.base}/token`,
      });
      assert.equal(result.success, true, String(result.error));
      assert.equal((result.data as { truncated: boolean }).truncated, true);
      assertNoPart(JSON.stringify(result), `the result cut at ${cut}`);
      assertNoPart(await history(f.host), `the history cut at ${cut}`);
    } finally {
      await f.close();
    }
  }
});

Deno.test("a secret header echoed in a binary body is not returned, whole or cut", async () => {
  for (const cut of [1000, CUTS[1]!]) {
    const f = await start(cut);
    try {
      const result = await f.host.callTool("http_request", {
        url: `${f.base}/bin`,
      });
      assert.equal(result.success, true, String(result.error));
      const data = result.data as { body: string; body_encoding: string };
      assert.equal(data.body_encoding, "base64");
      const body = new TextDecoder().decode(Uint8Array.fromBase64(data.body));
      assert.ok(body.startsWith("x".repeat(PAD)), body);
      assertNoPart(body, `the binary body cut at ${cut}`);
    } finally {
      await f.close();
    }
  }
});

Deno.test("a secret header echoed in a form only the broker knows is not returned", async () => {
  // The broker cuts a session's secret toolkit settings from answers in
  // every form it knows for an operator's secret, not only the forms the
  // tool itself knows.
  const f = await start(1_000_000);
  try {
    const result = await f.host.callTool("http_request", {
      url: `${f.base}/hex`,
    });
    assert.equal(result.success, true, String(result.error));
    const body = (result.data as { body: string }).body;
    assert.ok(body.startsWith("x".repeat(PAD)), body);
    const escaped = hexEscaped(AUTH);
    assert.ok(!body.includes(escaped), `the body shows ${escaped}`);
    assert.ok(!body.includes(hexEscaped(TOKEN)), body);
    const kept = await history(f.host);
    assert.ok(!kept.includes(JSON.stringify(escaped).slice(1, -1)), kept);
  } finally {
    await f.close();
  }
});
