import assert from "node:assert/strict";
import {
  type AnsweredRequestType,
  decodeResponse,
  encodeResponse,
  type ResponseMap,
} from "./responses.ts";
import { decodeSkill, encodeSkill, skillOutcome } from "./skill.ts";
import { encodeTool, encodeToolOutcome, tool, toolOutcome } from "./tool.ts";
import { decodeRequest, parseMessage } from "./request_schemas.ts";
import { encodeRequest } from "./requests.ts";

const BODIES: { [T in AnsweredRequestType]: ResponseMap[T] } = {
  "handshake/req": {
    sessionId: "s1",
    acceptedCaps: ["tools", "skill"],
    maxParallel: 4,
    ok: true,
    reason: "",
  },
  "ping": { uptimeSeconds: 1.5 },
  "tool/list/req": {
    tools: [tool({
      name: "grep",
      description: "Search",
      inputSchema: {
        type: "object",
        properties: { pattern: { type: "string", description: "Regex" } },
        required: ["pattern"],
      },
      deferLoading: true,
      toolkit: "fs",
    })],
  },
  "tool/call/req": {
    result: toolOutcome({
      success: false,
      toolName: "grep",
      durationMs: 7,
      errorCode: "timeout",
      error: "Timed out",
      exitCode: 2,
      events: [{ kind: "log", data: { level: "info" }, seq: 0 }],
    }),
    createdAt: 1.25,
  },
  "toolkit/list/req": {
    toolkits: [{
      name: "fs",
      alias: "files",
      description: "Files",
      category: "io",
      tags: ["x"],
      iconSvg: null,
      schema: { type: "object" },
      tools: ["grep"],
      configured: true,
      version: "2.0.0",
    }],
  },
  "toolkit/configure/req": {
    toolkitName: "fs",
    status: "error",
    message: "Bad root",
  },
  "skill/discover/req": {
    skills: [{
      name: "notes",
      version: "1.0.0",
      description: "Notes",
      triggers: ["take notes"],
      status: "Blocked",
      whenToUse: "Often",
      argumentHint: "<text>",
      source: "project",
      tools: ["grep"],
      toolkits: null,
      instructions: "Be brief.",
      filePath: "/s/notes/SKILL.md",
      llmConfig: {
        providerName: "openai",
        providerCredentials: {},
        providerConfig: false,
        isDefault: false,
      },
      category: null,
      tags: ["text"],
      maxTurns: 3,
      timeoutSeconds: null,
      icon: null,
      metadata: { blocked_reason: "No tool" },
      inputSchema: {},
      outputSchema: {},
      arguments: null,
    }],
  },
  "skill/call/req": {
    name: "notes",
    result: skillOutcome({ success: true, durationMs: 3, data: { n: 1 } }),
    error: null,
    createdAt: 2.5,
  },
};

Deno.test("every answer body survives encode then decode, with req_id and the wire type", () => {
  for (const type of Object.keys(BODIES) as AnsweredRequestType[]) {
    const wire = JSON.parse(
      JSON.stringify(encodeResponse(type, "r9", BODIES[type])),
    );
    assert.equal(wire.req_id, "r9", type);
    assert.equal(wire.version, "1.0", type);
    const back = decodeResponse(type, wire);
    if (type === "tool/list/req") {
      // The wire carries parameters, not the schema: compare what survives.
      const [t] = (back as ResponseMap["tool/list/req"]).tools;
      assert.equal(t?.deferLoading, true);
      assert.deepEqual(t?.inputSchema.required, ["pattern"]);
      continue;
    }
    assert.deepEqual(back, BODIES[type], type);
  }
});

Deno.test("the wire form has exactly the snake_case fields the Python client requires", () => {
  const call = encodeResponse("tool/call/req", "r", BODIES["tool/call/req"]);
  assert.deepEqual(Object.keys(call.data as object).sort(), [
    "data",
    "duration_ms",
    "error",
    "error_code",
    "events",
    "exit_code",
    "success",
    "summary",
    "tool_name",
    "truncated",
  ]);
  const skill = encodeResponse("skill/call/req", "r", {
    name: "x",
    result: null,
    error: { code: "unknown_skill", message: "Unknown", retryable: false },
  });
  assert.ok("data" in skill && skill.data === null);
  assert.equal(typeof skill.created_at, "number");
});

Deno.test("tools, toolkits and skills go on the wire with exactly their A2E fields", () => {
  const keys = (value: object) => Object.keys(value).sort();
  const [toolDef] = encodeResponse(
    "tool/list/req",
    "r",
    BODIES["tool/list/req"],
  )
    .tools as object[];
  assert.deepEqual(keys(toolDef!), [
    "defer_loading",
    "description",
    "idempotent",
    "input_parameters",
    "name",
    "output_parameters",
    "streaming",
    "tags",
    "toolkit",
    "version",
  ]);
  const [kit] = encodeResponse(
    "toolkit/list/req",
    "r",
    BODIES["toolkit/list/req"],
  ).toolkits as object[];
  assert.deepEqual(keys(kit!), [
    "alias",
    "category",
    "configured",
    "description",
    "icon_svg",
    "name",
    "schema",
    "tags",
    "tools",
    "version",
  ]);
  const [skill] = encodeResponse(
    "skill/discover/req",
    "r",
    BODIES["skill/discover/req"],
  ).skills as Record<string, object>[];
  assert.deepEqual(keys(skill!), [
    "argument_hint",
    "arguments",
    "category",
    "description",
    "file_path",
    "icon",
    "input_schema",
    "instructions",
    "llm_config",
    "max_turns",
    "metadata",
    "name",
    "output_schema",
    "source",
    "status",
    "tags",
    "timeout_seconds",
    "toolkits",
    "tools",
    "triggers",
    "version",
    "when_to_use",
  ]);
  assert.deepEqual(keys(skill!.llm_config!), [
    "is_default",
    "provider_config",
    "provider_credentials",
    "provider_name",
  ]);
  const result = encodeResponse("skill/call/req", "r", BODIES["skill/call/req"])
    .data as object;
  assert.deepEqual(keys(result), [
    "data",
    "duration_ms",
    "error",
    "error_code",
    "events",
    "success",
    "summary",
    "truncated",
  ]);
});

Deno.test("a decoded request renames only its own fields, never the caller's data", () => {
  const parsed = parseMessage(JSON.stringify({
    type: "tool/call/req",
    id: "r1",
    tool_name: "echo",
    arguments: { tool_name: "inner", session_id: "kept" },
  }));
  assert.ok(parsed.ok && parsed.request.type === "tool/call/req");
  assert.equal(parsed.request.toolName, "echo");
  assert.deepEqual(parsed.request.arguments, {
    tool_name: "inner",
    session_id: "kept",
  });
  assert.ok(!("tool_name" in parsed.request));
});

Deno.test("encodeRequest() then parse gives the same request back", () => {
  const wire = encodeRequest({
    type: "skill/call/req",
    name: "notes",
    arguments: { text: "hi" },
    correlationId: "c1",
    timeout: 5,
    streaming: false,
    llmOverride: {
      providerName: "anthropic",
      providerCredentials: { api_key: "k" },
      providerConfig: { model: "m" },
      isDefault: false,
    },
    metadata: { trace: "t" },
  });
  assert.equal(wire.correlation_id, "c1");
  assert.equal(
    (wire.llm_override as Record<string, unknown>).provider_name,
    "anthropic",
  );
  const parsed = parseMessage(JSON.stringify(wire));
  assert.ok(parsed.ok && parsed.request.type === "skill/call/req");
  assert.equal(parsed.request.llmOverride?.providerName, "anthropic");
  assert.deepEqual(parsed.request.llmOverride?.providerConfig, { model: "m" });
  assert.deepEqual(
    decodeRequest({ ...wire, type: "skill/call/req" }).metadata,
    {
      trace: "t",
    },
  );
});

Deno.test("fields a record carries beyond its wire type never reach the wire", () => {
  // Registry entries and skill records extend the wire types with a path,
  // a hash, permissions...: the encoders copy only the listed fields.
  const extra = { path: "/srv/secret/tool.ts", hash: "abc", permissions: {} };
  const wireTool = encodeTool({
    ...tool({ name: "t", description: "d" }),
    ...extra,
  } as ReturnType<typeof tool>);
  const wireSkill = encodeSkill({
    ...decodeSkill({ name: "s", description: "d" }),
    ...extra,
  } as ReturnType<typeof decodeSkill>);
  const wireOutcome = encodeToolOutcome({
    ...toolOutcome({ success: true, toolName: "t", durationMs: 1 }),
    ...extra,
  } as ReturnType<typeof toolOutcome>);
  for (const wire of [wireTool, wireSkill, wireOutcome]) {
    for (const key of Object.keys(extra)) {
      assert.ok(!(key in wire), `"${key}" leaked: ${JSON.stringify(wire)}`);
    }
  }
});

Deno.test("decodeSkill() reads a status only from the string itself", () => {
  assert.equal(decodeSkill({ name: "s", status: "Blocked" }).status, "Blocked");
  for (const status of [["Blocked"], { toString: () => "Blocked" }, 1]) {
    assert.equal(decodeSkill({ name: "s", status }).status, "Published");
  }
});

Deno.test("a host's parameter named __proto__ stays a parameter where __proto__ sets the prototype", async () => {
  // Deno has no Object.prototype.__proto__ setter, but the client also runs
  // in browsers and Node: there, assigning a host's parameter name to a
  // plain object made `__proto__` the object's prototype. Checked in a
  // process that has the setter.
  const script = `
    import { decodeTool } from ${
    JSON.stringify(import.meta.resolve("./tool.ts"))
  };
    const tool = decodeTool(JSON.parse(
      '{"name":"t","input_parameters":[{"name":"__proto__","type":"string","required":true}]}',
    ));
    const properties = tool.inputSchema.properties;
    const inherited = [];
    for (const key in properties) inherited.push(key);
    console.log(JSON.stringify({ own: Object.keys(properties), inherited, required: tool.inputSchema.required }));
  `;
  const { code, stdout } = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--unstable-unsafe-proto", script],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  assert.equal(code, 0);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(stdout)), {
    own: ["__proto__"],
    inherited: ["__proto__"],
    required: ["__proto__"],
  });
});

Deno.test("a hostile host's type reaches the error only as printable text", () => {
  // JSON.stringify escapes C0 controls but not C1 (U+009B starts a terminal
  // escape sequence), bidi overrides or the Unicode line separators.
  let message = "";
  try {
    decodeResponse("ping", { type: "\u009b2J\u202eevil\u2028x" });
  } catch (error) {
    message = (error as Error).message;
  }
  assert.match(message, /expected "pong"/);
  assert.doesNotMatch(message, /[\u0080-\u009f\u2028\u2029\u202a-\u202e]/);
  assert.match(message, /\\u009b2J\\u202eevil\\u2028x/);
});
