import assert from "node:assert/strict";
import {
  JSONRPCRequestSchema,
  LATEST_PROTOCOL_VERSION,
} from "@modelcontextprotocol/sdk/types.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { jsonAnswer, lazyRequestInfo, plainJsonRequest } from "./json_post.ts";

const GOOD_HEADERS = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
};

const post = (headers: Record<string, string> = GOOD_HEADERS) =>
  new Request("http://x/mcp", { method: "POST", headers });

const call = { jsonrpc: "2.0", id: 1, method: "tools/call" };

// Bodies the SDK takes and bodies it refuses: the fast path must take a
// body only when the SDK's own schema does (and it asks for no progress).
const BODIES: unknown[] = [
  call,
  { ...call, id: "a" },
  { ...call, id: 1.5 },
  { ...call, id: 2 ** 60 },
  { ...call, id: null },
  { ...call, id: true },
  { ...call, jsonrpc: "1.0" },
  { id: 1, method: "tools/call" },
  { ...call, method: 5 },
  { ...call, method: "initialize" },
  { ...call, params: { name: "echo", arguments: { a: 1 } } },
  { ...call, params: [] },
  { ...call, params: null },
  { ...call, params: "x" },
  { ...call, params: { _meta: {} } },
  { ...call, params: { _meta: { other: 1 } } },
  { ...call, params: { _meta: null } },
  { ...call, params: { _meta: [] } },
  { ...call, params: { _meta: { progressToken: 1 } } },
  { ...call, params: { _meta: { progressToken: null } } },
  {
    ...call,
    params: {
      _meta: { "io.modelcontextprotocol/related-task": { taskId: "t" } },
    },
  },
  {
    ...call,
    params: { _meta: { "io.modelcontextprotocol/related-task": 5 } },
  },
  { ...call, extra: 1 },
  { ...call, result: {} },
  [call],
  null,
  "x",
];

Deno.test("plainJsonRequest takes a body only when the SDK's schema does, and no progress is asked for", () => {
  for (const body of BODIES) {
    const sdk = JSONRPCRequestSchema.safeParse(body);
    const plain = sdk.success && sdk.data.method !== "initialize" &&
      sdk.data.params?._meta?.progressToken === undefined &&
      sdk.data.params?._meta?.["io.modelcontextprotocol/related-task"] ===
        undefined;
    const taken = plainJsonRequest(post(), body) !== undefined;
    // Never take what the SDK refuses; a body the SDK takes may still go
    // the SDK's way (e.g. a progress token of null), never the other way.
    if (taken) {
      assert.ok(plain, `taken but the SDK refuses: ${JSON.stringify(body)}`);
    }
    if (plain) assert.ok(taken, `plain but not taken: ${JSON.stringify(body)}`);
  }
});

Deno.test("plainJsonRequest leaves to the SDK every header the SDK would refuse", () => {
  const variants: [Record<string, string>, boolean][] = [
    [GOOD_HEADERS, true],
    [{ ...GOOD_HEADERS, accept: "application/json" }, false],
    [{ ...GOOD_HEADERS, accept: "text/event-stream" }, false],
    [{ ...GOOD_HEADERS, accept: "*/*" }, false],
    [{ ...GOOD_HEADERS, "content-type": "text/plain" }, false],
    [
      { ...GOOD_HEADERS, "content-type": "application/json; charset=utf-8" },
      true,
    ],
    [{ ...GOOD_HEADERS, "mcp-protocol-version": "1999-01-01" }, false],
    [{
      accept: GOOD_HEADERS.accept,
      "content-type": GOOD_HEADERS["content-type"],
    }, true],
  ];
  for (const [headers, expected] of variants) {
    assert.equal(
      plainJsonRequest(post(headers), call) !== undefined,
      expected,
      JSON.stringify(headers),
    );
    // The same rule the SDK applies to the content type.
    if (!expected && headers["content-type"] !== GOOD_HEADERS["content-type"]) {
      assert.equal(isJsonContentType(headers["content-type"]!), false);
    }
  }
});

Deno.test("jsonAnswer sends the answer as the SDK's JSON response mode does", async () => {
  const response = jsonAnswer({
    jsonrpc: "2.0",
    id: "a",
    error: { code: -32601, message: "Method not found" },
  }, "s-1");
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.equal(response.headers.get("mcp-session-id"), "s-1");
  assert.deepEqual(await response.json(), {
    jsonrpc: "2.0",
    id: "a",
    error: { code: -32601, message: "Method not found" },
  });
});

Deno.test("lazyRequestInfo reads the headers and URL only when asked, once", () => {
  const request = new Request("http://h/mcp?x=1", {
    headers: { authorization: "Bearer t" },
  });
  const info = lazyRequestInfo(request);
  assert.equal(info.headers, info.headers);
  assert.equal(info.headers.authorization, "Bearer t");
  assert.equal(info.url?.search, "?x=1");
  assert.equal(info.url, info.url);
});
