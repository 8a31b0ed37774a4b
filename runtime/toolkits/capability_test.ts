import assert from "node:assert/strict";
import { encodeResponse } from "../../protocol/responses.ts";
import type { Exchange, SessionScope } from "../capability.ts";
import {
  decodeRequest,
  REQUEST_SCHEMAS,
} from "../../protocol/request_schemas.ts";
import type { Request, RequestType } from "../../protocol/requests.ts";
import type { ToolkitEntry } from "../registry/types.ts";
import { buildSnapshot } from "../registry/snapshot.ts";
import { createToolkitsCapability } from "./capability.ts";
import { createToolkitConfigs } from "./configs.ts";

const SECRET = "ghp_supersecret_0123";

function kit(name: string, fields: Record<string, unknown> = {}) {
  return {
    origin: "builtin" as const,
    root: "/s",
    module: {
      path: `/s/${name}/toolkit.ts`,
      hash: "h",
      error: null,
      definitions: [{
        export: "default",
        kind: "toolkit" as const,
        name,
        fields,
        permissions: {},
        runnable: false,
      }],
    },
  };
}

function setup(preconfigured: Record<string, unknown> = {}) {
  const snapshot = buildSnapshot([
    kit("github", {
      category: "dev",
      tags: ["git", "API"],
      config: {
        type: "object",
        properties: {
          token: { type: "string", secret: true, default: "dflt_secret" },
          org: { type: "string" },
        },
        required: ["token", "org"],
      },
    }),
    kit("notes", { category: "writing", tags: ["api"] }),
    {
      ...kit("fs"),
      origin: "file" as const,
    },
  ]);
  const capability = createToolkitsCapability({
    registry: { snapshot },
    configs: createToolkitConfigs(preconfigured),
  });
  return { capability, snapshot };
}

function session(): SessionScope {
  return {
    id: "s1",
    token: "",
    state: new Map(),
    send() {},
    signal: new AbortController().signal,
  };
}

function exchange<T extends RequestType>(
  type: T,
  fields: Record<string, unknown>,
  scope: SessionScope,
): Exchange<T> {
  const request = decodeRequest(
    REQUEST_SCHEMAS[type].parse({ type, id: "req1", ...fields }),
  );
  return {
    request: request as Request<T>,
    session: scope,
    signal: scope.signal,
  };
}

async function list(
  cap: ReturnType<typeof setup>["capability"],
  scope: SessionScope,
  fields: Record<string, unknown> = {},
) {
  const resp = encodeResponse(
    "toolkit/list/req",
    "req1",
    await cap.handlers["toolkit/list/req"]!(
      exchange("toolkit/list/req", fields, scope),
    ),
  );
  assert.equal(resp.type, "toolkit/list/resp");
  assert.equal(resp.req_id, "req1");
  return resp.toolkits as { name: string; configured: boolean }[];
}

async function configure(
  cap: ReturnType<typeof setup>["capability"],
  scope: SessionScope,
  fields: Record<string, unknown>,
) {
  const resp = encodeResponse(
    "toolkit/configure/req",
    "req1",
    await cap.handlers["toolkit/configure/req"]!(
      exchange("toolkit/configure/req", fields, scope),
    ),
  );
  assert.equal(resp.type, "toolkit/configure/resp");
  assert.equal(resp.req_id, "req1");
  return resp as unknown as {
    status: string;
    message: string | null;
    toolkit_name: string;
  };
}

Deno.test("toolkit/list/req filters by kind (origin or category) and tags", async (t) => {
  const { capability } = setup();
  const s = session();
  const names = async (fields: Record<string, unknown>) =>
    (await list(capability, s, fields)).map((k) => k.name);
  await t.step("no filter, sorted", async () => {
    assert.deepEqual(await names({}), ["fs", "github", "notes"]);
  });
  await t.step("origin", async () => {
    assert.deepEqual(await names({ filter_kind: "file" }), ["fs"]);
  });
  await t.step("category", async () => {
    assert.deepEqual(await names({ filter_kind: "dev" }), ["github"]);
  });
  await t.step("tags, AND, case-insensitive", async () => {
    assert.deepEqual(await names({ filter_tags: ["api"] }), [
      "github",
      "notes",
    ]);
    assert.deepEqual(await names({ filter_tags: ["api", "git"] }), ["github"]);
    assert.deepEqual(await names({ filter_tags: ["api", "nope"] }), []);
  });
});

Deno.test("toolkit/list/req sends every field and no secret default", async () => {
  const { capability } = setup();
  const [github] = await list(capability, session(), { filter_kind: "dev" });
  assert.deepEqual(Object.keys(github!).sort(), [
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
  assert.ok(!JSON.stringify(github).includes("dflt_secret"));
});

Deno.test("toolkit/configure/req validates, scopes to the session, and never echoes values", async () => {
  const { capability } = setup();
  const a = session();
  const b = session();
  let resp = await configure(capability, a, {
    toolkit_name: "github",
    config: { token: SECRET, org: 42 },
  });
  assert.equal(resp.status, "error");
  assert.equal(resp.toolkit_name, "github");
  assert.match(resp.message ?? "", /"org" must be of type string/);
  assert.ok(!JSON.stringify(resp).includes(SECRET));
  assert.equal((await list(capability, a))[1]?.configured, false);

  resp = await configure(capability, a, {
    toolkit_name: "github",
    config: { token: SECRET, org: "acme" },
  });
  assert.deepEqual([resp.status, resp.message], ["ok", null]);
  assert.equal((await list(capability, a))[1]?.configured, true);
  assert.equal(
    (await list(capability, b))[1]?.configured,
    false,
    "another session is not configured",
  );
});

Deno.test("toolkit/configure/req answers an empty or unknown name with status error", async () => {
  const { capability } = setup();
  const empty = await configure(capability, session(), {});
  assert.equal(empty.status, "error");
  assert.equal(empty.toolkit_name, "");
  assert.match(empty.message ?? "", /"toolkit_name" is empty/);
  const unknown = await configure(capability, session(), {
    toolkit_name: "nope",
  });
  assert.equal(unknown.status, "error");
  assert.match(unknown.message ?? "", /toolkit "nope": no such toolkit/);
});

Deno.test("host config preconfigures a toolkit for every session", async () => {
  const { capability, snapshot } = setup({
    github: { token: SECRET, org: "acme" },
  });
  const s = session();
  assert.equal((await list(capability, s))[1]?.configured, true);
  const configs = createToolkitConfigs({ github: { token: SECRET } });
  const entry = snapshot.toolkits.get("github") as ToolkitEntry;
  const resolved = configs.resolve(s, entry);
  assert.equal(resolved.configured, true);
  assert.equal(resolved.problem, '"org" is required');
  assert.deepEqual(resolved.secrets, [SECRET]);
  assert.equal(configs.configure(s, entry, { org: "acme" }), null);
  assert.deepEqual(configs.resolve(s, entry).config, {
    token: SECRET,
    org: "acme",
  });
  assert.throws(() => createToolkitConfigs({ x: "y" }), /"toolkits\.x"/);
});
