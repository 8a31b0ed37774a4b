import assert from "node:assert/strict";
import { EgressBroker } from "../egress/broker.ts";
import { checkChosenEndpoint, eventGuard, llmFetch } from "./llm_fetch.ts";
import { SkillboxError } from "../../protocol/errors.ts";
import { DEFAULT_LLM_RULES, resolveLlmConfig } from "./config.ts";
import { createProvider } from "./provider.ts";

async function through(parts: string[], max: number): Promise<string> {
  const body = ReadableStream.from(
    parts.map((p) => new TextEncoder().encode(p)),
  );
  return await new Response(body.pipeThrough(eventGuard(max))).text();
}

Deno.test("eventGuard() bounds each SSE event, whatever the line endings and chunking", async () => {
  // Many small events pass, however many there are.
  const events = Array.from({ length: 100 }, () => "data: 12345\n\n");
  assert.equal((await through(events, 16)).length, 1300);
  // "\r\n\r\n" ends an event too, even split across chunks.
  assert.equal(
    await through(["data: 12345\r\n\r", "\ndata: 12345\r\n\r\n"], 16),
    "data: 12345\r\n\r\ndata: 12345\r\n\r\n",
  );
  // One event of many lines with no blank line between them does not.
  await assert.rejects(
    through(["data: 1\ndata: 2\n", "data: 3\ndata: 4\n"], 16),
    /more than 16 bytes/,
  );
  // Nor a body with no newline at all.
  await assert.rejects(
    through(["x".repeat(10), "x".repeat(10)], 16),
    /more than 16 bytes/,
  );
});

Deno.test("checkChosenEndpoint() needs the host in llm.allowed_hosts and http(s)", () => {
  checkChosenEndpoint("https://llm.example/v1", ["llm.example"]);
  checkChosenEndpoint("http://llm.example:8080/v1", ["llm.example:8080"]);
  assert.throws(
    () => checkChosenEndpoint("http://llm.example:9/v1", ["llm.example:8080"]),
    /not in llm\.allowed_hosts/,
  );
  assert.throws(
    () => checkChosenEndpoint("file:///etc/passwd", ["*"]),
    /"file:" is not http or https/,
  );
  assert.throws(
    () => checkChosenEndpoint("nope", ["*"]),
    /Cannot use LLM endpoint "nope": not a URL/,
  );
});

Deno.test("llmFetch() on a chosen endpoint sends only the SDK's headers, to the checked address", async () => {
  const seen: Headers[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      seen.push(req.headers);
      return new Response("data: {}\n\n");
    },
  );
  try {
    const base = `http://llm.example:${server.addr.port}/v1`;
    const broker = new EgressBroker({
      resolve: () => Promise.resolve(["127.0.0.1"]),
      privateHosts: ["llm.example"],
    });
    const fetch = llmFetch(base, {
      maxEventBytes: 1024,
      chosen: { broker, allowedHosts: ["llm.example"] },
    });
    const res = await fetch(`${base}/chat/completions`, {
      method: "POST",
      headers: {
        authorization: "Bearer client",
        "x-stainless-lang": "js",
        "x-host-secret": "from-env",
        "openai-organization": "org-host",
      },
      body: "{}",
    });
    assert.equal(await res.text(), "data: {}\n\n");
    assert.equal(seen[0]!.get("authorization"), "Bearer client");
    assert.equal(seen[0]!.get("x-stainless-lang"), "js");
    assert.equal(seen[0]!.get("x-host-secret"), null);
    assert.equal(seen[0]!.get("openai-organization"), null);
    // Without the operator's private-host allowance, no request is made.
    const refused = llmFetch(base, {
      maxEventBytes: 1024,
      chosen: {
        broker: new EgressBroker({
          resolve: () => Promise.resolve(["127.0.0.1"]),
        }),
        allowedHosts: ["llm.example"],
      },
    });
    await assert.rejects(
      refused(`${base}/chat/completions`),
      /Cannot use LLM endpoint ".*": Host "llm\.example" resolves to 127\.0\.0\.1/,
    );
    assert.equal(seen.length, 1);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a chosen endpoint that refuses the connection is unreachable, not denied", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (closed.addr as Deno.NetAddr).port;
  closed.close(); // nothing listens there now
  const base = `http://127.0.0.1:${port}/v1`;
  const llm = createProvider(
    resolveLlmConfig([], {
      override: {
        provider_name: "openai",
        provider_credentials: { api_key: "k" },
        provider_config: { base_url: base, model: "m" },
      },
    }),
    {
      rules: { ...DEFAULT_LLM_RULES, allowedHosts: [`127.0.0.1:${port}`] },
      broker: new EgressBroker({ privateHosts: ["127.0.0.1"] }),
    },
  );
  await assert.rejects(
    llm.chat({ messages: [{ role: "user", content: "hi" }] }),
    (error: unknown) => {
      assert.ok(error instanceof SkillboxError);
      assert.equal(error.code, "skill_error");
      assert.equal(error.retryable, true);
      assert.match(error.message, /^Cannot reach LLM provider "openai"/);
      return true;
    },
  );
});

Deno.test("llmFetch() follows a 303 on its own origin as fetch does: a POST becomes a GET, a HEAD stays a HEAD", async () => {
  const seen: string[] = [];
  const server = Deno.serve({ port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    seen.push(`${req.method} ${path}`);
    return path === "/v1/a"
      ? new Response(null, { status: 303, headers: { location: "/v1/b" } })
      : new Response("ok");
  });
  try {
    const fetch = llmFetch(`http://127.0.0.1:${server.addr.port}/v1`, {
      maxEventBytes: 1024,
    });
    const url = `http://127.0.0.1:${server.addr.port}/v1/a`;
    for (const method of ["POST", "HEAD"]) {
      const res = await fetch(url, {
        method,
        body: method === "POST" ? "{}" : undefined,
      });
      await res.body?.cancel();
      assert.equal(res.status, 200);
    }
    assert.deepEqual(seen, [
      "POST /v1/a",
      "GET /v1/b",
      "HEAD /v1/a",
      "HEAD /v1/b",
    ]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("llmFetch() reads an error body whole within the bound, blank lines or not, and drops one past it", async () => {
  let cancelled = Promise.withResolvers<void>();
  const server = Deno.serve({ port: 0, onListen() {} }, (req) => {
    const size = Number(new URL(req.url).searchParams.get("size"));
    const line = new TextEncoder().encode("error\n\n\n");
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= size) return controller.close();
        sent += line.length;
        controller.enqueue(line);
      },
      cancel: () => cancelled.resolve(),
    });
    return new Response(body, { status: 500 });
  });
  try {
    const fetch = llmFetch(`http://127.0.0.1:${server.addr.port}/v1`, {
      maxEventBytes: 64,
    });
    const url = `http://127.0.0.1:${server.addr.port}/v1/x`;
    const small = await fetch(`${url}?size=64`);
    assert.equal(small.status, 500);
    assert.equal(await small.text(), "error\n\n\n".repeat(8));
    cancelled = Promise.withResolvers<void>();
    await assert.rejects(
      fetch(`${url}?size=${1024 * 1024}`),
      (error: Error) => {
        assert.ok(error instanceof SkillboxError);
        assert.equal(
          error.message,
          "LLM endpoint answered HTTP 500 with an error body of more than 64 bytes: the limit follows llm.max_response_bytes",
        );
        assert.deepEqual(error.detail, {
          limit: "max_response_bytes",
          status: 500,
        });
        return true;
      },
    );
    // The server's body was cancelled, not read to its end.
    await cancelled.promise;
  } finally {
    await server.shutdown();
  }
});
