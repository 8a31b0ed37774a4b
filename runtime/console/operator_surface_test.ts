import assert from "node:assert/strict";
import { createOperatorSurface } from "./operator_surface.ts";
import { defaultConfig, parseConfig } from "../config.ts";
import type { RegistryStatus } from "../load_report.ts";

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

// The catalog is the operator's in-process lists, seen through the viewer:
// an admin gets every tool's status and the registry's refusals; a token
// only the tools its policy lets its sessions list, each available.
Deno.test("/api/catalog: statuses and refusals for admins, the token's own list for a token", async () => {
  const tool = (name: string, status: "available" | "blocked") => ({
    name,
    description: `${name} it`,
    toolkit: name === "wipe" ? "ops" : null,
    tags: ["t"],
    origin: "file",
    path: `/s/${name}.ts`,
    status,
    blockedReason: status === "blocked" ? "denied by policy" : null,
  });
  let registry: RegistryStatus | null = null;
  const operator = createOperatorSurface({
    config: parseConfig(JSON.stringify({
      tokens: ["admin-token-1", "user-token-22"],
      console: { admin_tokens: ["admin-token-1"] },
      store: null,
      policy: { tools: { tokens: { "user-token-22": { deny: ["wipe"] } } } },
    })),
    sessions: () => [],
    processes: () => [],
    registryStatus: () => registry,
    // The host's answers to its in-process lists (envelope left out).
    request: (message) =>
      Promise.resolve(
        ({
          "tool/list/req": {
            tools: [
              { name: "add", description: "add it" },
              { name: "wipe", toolkit: "ops", tags: ["t"] },
            ],
          },
          "toolkit/list/req": {
            toolkits: [{ name: "ops", description: "", tools: ["wipe"] }],
          },
        }[message.type] ?? { skills: [] }) as never,
      ),
  });
  const as = async (token: string) =>
    await (await operator.app.request("/api/catalog", {
      headers: { authorization: `Bearer ${token}` },
    })).json();
  try {
    // Before the skills folders are loaded: the lists, each available.
    const early = await as("admin-token-1");
    assert.deepEqual(
      early.tools.map((t: Record<string, unknown>) => t.status),
      [
        "available",
        "available",
      ],
    );
    assert.deepEqual(early.refused, []);
    registry = {
      tools: [tool("add", "available"), tool("wipe", "blocked")],
      refused: [{
        kind: "tool",
        name: "add",
        path: "/s/fake_add.ts",
        origin: "file",
        reason: 'Tool "add" is refused: taken',
      }],
    };
    const admin = await as("admin-token-1");
    assert.deepEqual(admin.tools[1], {
      name: "wipe",
      description: "wipe it",
      toolkit: "ops",
      tags: ["t"],
      status: "blocked",
      blocked_reason: "denied by policy",
      origin: "file",
      path: "/s/wipe.ts",
    });
    assert.deepEqual(admin.refused, [{
      kind: "tool",
      name: "add",
      path: "/s/fake_add.ts",
      reason: 'Tool "add" is refused: taken',
    }]);
    const user = await as("user-token-22");
    assert.deepEqual(user, {
      tools: [{
        name: "add",
        description: "add it",
        toolkit: null,
        tags: [],
        status: "available",
        blocked_reason: null,
      }],
      toolkits: [],
      skills: [],
      refused: [],
    });
  } finally {
    await operator.close();
  }
});
