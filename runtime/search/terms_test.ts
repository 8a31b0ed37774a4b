import assert from "node:assert/strict";
import { normalizeTerm, terms, tokenize } from "./terms.ts";

Deno.test("tokenize() splits snake_case, kebab-case and camelCase alike", () => {
  assert.deepEqual(tokenize("read_csv"), ["read", "csv"]);
  assert.deepEqual(tokenize("read-csv"), ["read", "csv", "readcsv"]);
  assert.deepEqual(tokenize("readCsv"), ["read", "Csv"]);
  assert.deepEqual(tokenize("XMLHttpRequest"), ["XML", "Http", "Request"]);
  assert.deepEqual(tokenize("  "), []);
});

Deno.test("tokenize() keeps digits in words and joins hyphenated compounds", () => {
  assert.deepEqual(tokenize("s3 ec2 base64"), ["s3", "ec2", "base64"]);
  assert.deepEqual(tokenize("on-call e-mail"), [
    "on",
    "call",
    "e",
    "mail",
    "oncall",
    "email",
  ]);
  assert.deepEqual(tokenize("17%"), ["17", "percent"]);
});

Deno.test("normalizeTerm() stems inflections to one term", async (t) => {
  const same = (a: string, b: string) =>
    assert.equal(normalizeTerm(a), normalizeTerm(b), `${a} / ${b}`);
  await t.step("plurals", () => {
    same("files", "file");
    same("queries", "query");
    same("matches", "match");
    same("boxes", "box");
    same("classes", "class");
  });
  await t.step("-ing and -ed", () => {
    same("encoding", "encode");
    same("encoded", "encode");
    same("running", "run");
    same("stopped", "stop");
    same("listed", "list");
    same("embedding", "embed");
  });
  await t.step("words that only look inflected stay", () => {
    assert.equal(normalizeTerm("string"), "string");
    assert.equal(normalizeTerm("status"), "status");
    assert.equal(normalizeTerm("address"), "address");
    assert.equal(normalizeTerm("analysis"), "analysis");
    assert.equal(normalizeTerm("k8s"), "k8s");
    assert.equal(normalizeTerm("speed"), "speed");
  });
  await t.step("stop words and bare numbers are dropped", () => {
    assert.equal(normalizeTerm("The"), null);
    assert.equal(normalizeTerm("please"), null);
    assert.equal(normalizeTerm("100"), null);
    assert.notEqual(normalizeTerm("file"), null);
    assert.notEqual(normalizeTerm("who"), null);
  });
});

Deno.test("terms() is what a query searches", () => {
  assert.deepEqual(terms("How do I read the CSV files?"), [
    "read",
    "csv",
    "fil",
  ]);
  assert.deepEqual(terms(""), []);
});

Deno.test("tokenize() reads a megabyte-long word in one pass", () => {
  // Tool descriptions are indexed on the host's thread and have no bound:
  // the compound pattern was tried from every letter of a word, so one
  // 40 KB word held the thread for half a minute, and a megabyte for hours.
  const word = "a".repeat(1024 * 1024);
  assert.deepEqual(tokenize(word), [word]);
  assert.deepEqual(tokenize(`x-${word}`), ["x", word, `x${word}`]);
});

Deno.test("tokenize() joins each run of single-hyphened words once", () => {
  assert.deepEqual(tokenize("a--b-c- -d-e ab-"), [
    "a",
    "b",
    "c",
    "d",
    "e",
    "ab",
    "bc",
    "de",
  ]);
});
