/**
 * `parseProcess` never throws and always answers in shape (Implementing Step 1: "report every
 * issue at once"; ARCHITECTURE: a parse result is a value). Fixture texts are mutated at random
 * (characters inserted and deleted, lines swapped) and random strings are parsed; each result is a
 * valid process, or at least one issue with a position inside the file.
 */

import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contentHash } from "./hash.ts";
import { parseProcess } from "./parse.ts";
import type { ParseResult } from "./types.ts";

const FIXTURES = [
  "conformance/fixtures/major-incident",
  "conformance/fixtures/vendor-check",
  "conformance/fixtures/customer-offboarding",
  "conformance/fixtures/invoice-approval",
  "fixtures/expense-approval",
].map((dir) => readFileSync(new URL(`../../../${dir}/PROCESS.md`, import.meta.url), "utf8"));

/** Characters that matter to YAML and to the splitter, plus ordinary text. */
const CHARS = [..."-:[]{},#&*!|>'\"%@`?\\ \t\n\r\uFEFF\ud800.0123456789abcjoinxyz"];

type Edit =
  | { kind: "insert"; at: number; text: string }
  | { kind: "delete"; at: number; length: number }
  | { kind: "swap"; a: number; b: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    text: fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 12 }) }),
  fc.record({ kind: fc.constant("swap" as const), a: fc.nat(), b: fc.nat() }),
);

function apply(text: string, e: Edit): string {
  if (e.kind === "insert") {
    const at = e.at % (text.length + 1);
    return text.slice(0, at) + e.text + text.slice(at);
  }
  if (e.kind === "delete") {
    const at = e.at % (text.length + 1);
    return text.slice(0, at) + text.slice(at + e.length);
  }
  const lines = text.split("\n");
  const a = e.a % lines.length;
  const b = e.b % lines.length;
  [lines[a], lines[b]] = [lines[b] as string, lines[a] as string];
  return lines.join("\n");
}

/** The result is one of the two shapes, and every issue points inside the file. */
function wellFormed(text: string, result: ParseResult) {
  const lines = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).split("\n");
  if (result.ok) {
    expect(result.process.contentHash).toBe(contentHash(result.process.frontmatter, result.process.body));
    return;
  }
  expect(result.issues.length).toBeGreaterThan(0);
  for (const issue of result.issues) {
    expect(Number.isInteger(issue.line) && issue.line >= 1 && issue.line <= lines.length).toBe(true);
    const line = lines[issue.line - 1] as string;
    expect(Number.isInteger(issue.col) && issue.col >= 1 && issue.col <= line.length + 1).toBe(true);
    expect(typeof issue.message).toBe("string");
    expect(issue.message.length).toBeGreaterThan(0);
  }
}

describe("parseProcess never throws", () => {
  it("Step 1 mutated fixtures parse to a process or to positioned issues", () => {
    fc.assert(
      fc.property(fc.nat(FIXTURES.length - 1), fc.array(edit, { minLength: 1, maxLength: 6 }), (i, edits) => {
        const text = edits.reduce(apply, FIXTURES[i] as string);
        wellFormed(text, parseProcess(text));
      }),
      { seed: 42, numRuns: 400 },
    );
  });

  it("Step 1 random strings, with and without a frontmatter frame, never throw", () => {
    const anyText = fc.string({ unit: "binary", maxLength: 200 });
    const yamlish = fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 200 });
    fc.assert(
      fc.property(fc.oneof(anyText, yamlish), fc.boolean(), (body, framed) => {
        const text = framed ? `---\n${body}\n---\n` : body;
        wellFormed(text, parseProcess(text));
      }),
      { seed: 7, numRuns: 400 },
    );
  });
});
