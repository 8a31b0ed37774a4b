/**
 * The files a run kept, through the console's API: listed with the run, one
 * file's content served on its own. The files come from untrusted scripts,
 * so these tests are hostile: a name that climbs out (`../../x`, `..`), a
 * file that is a page with a script, a file over the cap, another run's
 * file through this run's id, odd indexes, and no token when one is needed.
 *
 * The runs are written by `_hostile_files.ts` into the host's store file.
 *
 * @module
 */

import assert from "node:assert/strict";
import { fixtureHost, getJson } from "../support/console_host.ts";
import { PAGE, writeHostileRuns } from "./_hostile_files.ts";

const TOKEN = "files-test-token";

function get(
  host: { fetch: (r: Request) => Response | Promise<Response> },
  path: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(
    host.fetch(new Request(`http://127.0.0.1:8787${path}`, { headers })),
  );
}

Deno.test("a run's detail lists its kept files: names as the script gave them, sizes, kept or not, binary or text", async () => {
  await using t = await fixtureHost();
  writeHostileRuns(t.dbPath);
  const body = await getJson(t.host, "/api/runs/run-a");
  const files = body.files as Record<string, unknown>[];
  assert.deepEqual(
    files.map((f) => [f.index, f.name, f.kept, f.binary, f.content]),
    [
      [0, "1/../../x", true, false, "files/0"],
      [1, "1/..", true, false, "files/1"],
      [2, "1/page.html", true, false, "files/2"],
      [3, "1/huge.txt", false, false, null],
      [4, '1/<img src=x onerror="parent.pwned=3">.bin', true, true, "files/4"],
    ],
  );
  assert.equal(files[3]!.size, 5 << 20);
  assert.equal(files[3]!.kept_bytes, 0);
  assert.match(String(files[3]!.note), /over the 1048576-byte cap/);
  // The listing carries no content: the 5 MiB file is not in it, nor any.
  const raw = await (await get(t.host, "/api/runs/run-a")).text();
  assert.ok(raw.length < 4000, `${raw.length} bytes`);
  assert.ok(!raw.includes("climb"));
  const other = await getJson(t.host, "/api/runs/run-b");
  assert.deepEqual(
    (other.files as { name: string }[]).map((f) => f.name),
    ["1/b.txt"],
  );
});

Deno.test("a kept file's content is served as an attachment that cannot run as a page in the console's origin", async () => {
  await using t = await fixtureHost();
  writeHostileRuns(t.dbPath);
  const page = await get(t.host, "/api/runs/run-a/files/2");
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(page.headers.get("x-content-type-options"), "nosniff");
  assert.equal(
    page.headers.get("content-security-policy"),
    "default-src 'none'; sandbox",
  );
  assert.equal(
    page.headers.get("content-disposition"),
    `attachment; filename="page.html"; filename*=UTF-8''page.html`,
  );
  assert.equal(page.headers.get("access-control-allow-origin"), null);
  assert.equal(await page.text(), PAGE);

  const climb = await get(t.host, "/api/runs/run-a/files/0");
  assert.equal(await climb.text(), "climb\n");
  assert.equal(
    climb.headers.get("content-disposition"),
    `attachment; filename="x"; filename*=UTF-8''x`,
  );
  const dots = await get(t.host, "/api/runs/run-a/files/1");
  assert.match(dots.headers.get("content-disposition")!, /filename="file"/);
  assert.equal(await dots.text(), "dot");

  const binary = await get(t.host, "/api/runs/run-a/files/4");
  assert.equal(binary.headers.get("content-type"), "application/octet-stream");
  const disposition = binary.headers.get("content-disposition")!;
  assert.ok(!/[<>"]/.test(disposition.replace(/^[^"]*"[^"]*"/, "")));
  assert.match(disposition, /^attachment; filename="_img_src_x_onerror__/);
  assert.deepEqual([...new Uint8Array(await binary.arrayBuffer())], [
    0xff,
    0,
    0xfe,
  ]);
});

Deno.test("a file is reached only by its place in its own run: no name, no other run, no file over the cap", async () => {
  await using t = await fixtureHost();
  writeHostileRuns(t.dbPath);
  for (
    const path of [
      "/api/runs/run-a/files/3", // the huge file: listed, not kept
      "/api/runs/run-a/files/5", // past the end
      "/api/runs/run-b/files/1", // run-a has a file 1, run-b does not
      "/api/runs/run-a/files/-1",
      "/api/runs/run-a/files/01",
      "/api/runs/run-a/files/1e0",
      "/api/runs/run-a/files/0x0",
      "/api/runs/run-a/files/%2F0",
      "/api/runs/run-a/files/..%2F..%2Fx",
      "/api/runs/run-a/files/1%2F..%2F..%2Fx",
      "/api/runs/run-a/files/b.txt",
      "/api/runs/nope/files/0",
      "/api/runs/run-a/files/0/..%2F1",
    ]
  ) {
    const res = await get(t.host, path);
    const text = await res.text();
    assert.equal(res.status, 404, `${path}: ${text.slice(0, 80)}`);
    assert.ok(!text.includes("climb") && !text.includes("dot"), path);
  }
  const b = await get(t.host, "/api/runs/run-b/files/0");
  assert.equal(await b.text(), "b");
});

Deno.test("with tokens, a run's files and their content need one", async () => {
  // The runs have no owner: only an admin token sees them.
  await using t = await fixtureHost({ tokens: [TOKEN], adminTokens: [TOKEN] });
  writeHostileRuns(t.dbPath);
  for (const path of ["/api/runs/run-a", "/api/runs/run-a/files/0"]) {
    for (const auth of [undefined, "Bearer wrong", `Basic ${btoa(TOKEN)}`]) {
      const res = await get(t.host, path, auth ? { authorization: auth } : {});
      assert.equal(res.status, 401, `${path} with ${auth}`);
      assert.ok(!(await res.text()).includes("climb"));
    }
  }
  const ok = await get(t.host, "/api/runs/run-a/files/0", {
    authorization: `Bearer ${TOKEN}`,
  });
  assert.equal(await ok.text(), "climb\n");
});

Deno.test("a token that is not a console admin gets 404 for a run it does not own and its files", async () => {
  const OTHER = "files-test-other-token";
  await using t = await fixtureHost({
    tokens: [TOKEN, OTHER],
    adminTokens: [TOKEN],
  });
  writeHostileRuns(t.dbPath);
  for (const path of ["/api/runs/run-a", "/api/runs/run-a/files/0"]) {
    const res = await get(t.host, path, { authorization: `Bearer ${OTHER}` });
    assert.equal(res.status, 404, path);
    assert.ok(!(await res.text()).includes("climb"));
  }
});
