import assert from "node:assert/strict";
import { sniffDelimiter } from "./_sniff.ts";

Deno.test("sniffDelimiter() picks the delimiter that splits lines consistently", () => {
  assert.equal(sniffDelimiter("a\tb\n1\t2\n"), "\t");
  assert.equal(sniffDelimiter("a|b|c\n1|2|3\n4|5|6"), "|");
  // More commas on line one, but only semicolons agree from line to line.
  assert.equal(sniffDelimiter("a;b,c,d,e\n1;2\n3;4\n"), ";");
});

Deno.test("sniffDelimiter() falls back to a comma when nothing fits", () => {
  assert.equal(sniffDelimiter(""), ",");
  assert.equal(sniffDelimiter("one column\nonly"), ",");
});
