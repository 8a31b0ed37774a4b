import assert from "node:assert/strict";
import type { OutgoingMessage } from "../capability.ts";
import type { A2eLink } from "./a2e_link.ts";
import { SessionCatalog } from "./catalog.ts";

const ENVELOPE = { id: "m", version: "1", ts: 0, req_id: "r" };

// A host whose skills can be changed between loads, counting its requests.
function fakeLink(skills: { name: string; status: string }[]) {
  const seen: string[] = [];
  const link: A2eLink = {
    sessionId: "s",
    inFlight: 0,
    close() {},
    request(message): Promise<OutgoingMessage> {
      seen.push(message.type);
      return Promise.resolve(
        message.type === "tool/list/req"
          ? { ...ENVELOPE, type: "tool/list/resp", tools: [{ name: "echo" }] }
          : { ...ENVELOPE, type: "skill/discover/resp", skills: [...skills] },
      );
    },
  };
  return { link, seen };
}

Deno.test("SessionCatalog loads once, reloads after reset(), and lists only published skills", async () => {
  const { link, seen } = fakeLink([
    { name: "echo", status: "Published" },
    { name: "search_tools", status: "Published" },
    { name: "plan", status: "Published" },
    { name: "draft", status: "Draft" },
  ]);
  const catalog = new SessionCatalog(link);
  const first = await catalog.get();
  assert.equal(await catalog.get(), first);
  assert.deepEqual(seen, ["tool/list/req", "skill/discover/req"]);
  assert.deepEqual([...first.tools.keys()], ["echo"]);
  assert.deepEqual([...first.skills.keys()], [
    "echo_skill",
    "search_tools_skill",
    "plan",
  ]);
  catalog.reset();
  assert.notEqual(await catalog.get(), first);
  assert.equal(seen.length, 4);
});

Deno.test("SessionCatalog.lookAgain() reloads once per unlisted name until the next reset()", async () => {
  const skills = [{ name: "plan", status: "Published" }];
  const { link, seen } = fakeLink(skills);
  const catalog = new SessionCatalog(link);
  await catalog.get();
  assert.equal(await catalog.lookAgain("deferred_tool"), undefined);
  assert.equal(seen.length, 4);
  assert.equal(await catalog.lookAgain("deferred_tool"), undefined);
  assert.equal(seen.length, 4, "an unlisted name is not looked up again");
  skills.push({ name: "fresh", status: "Published" });
  assert.equal((await catalog.lookAgain("fresh"))?.name, "fresh");
  assert.equal(seen.length, 6);
  catalog.reset();
  assert.equal(await catalog.lookAgain("deferred_tool"), undefined);
  assert.equal(seen.length, 8, "reset() forgets the unlisted names");
});
