/**
 * The content hash (specification §6 rule 5; ARCHITECTURE "Contracts fixed now"): SHA-256 over the
 * RFC 8785 canonical JSON of the parsed frontmatter, `\n`, then the body exactly as written.
 * Expected values are computed here from hand-written canonical JSON, never by the code under test.
 */

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { contentHash } from "./hash.ts";
import { parseProcess } from "./parse.ts";
import { processOf } from "./test-support.ts";

const sha256 = (text: string) => createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex");

describe("§6 rule 5 content hash vectors", () => {
  it.each([
    ["1.0 is written 1", { a: 1.0 }, "", '{"a":1}'],
    ["1e21 is written 1e+21", { n: 1e21 }, "x", '{"n":1e+21}'],
    ["-0 is written 0", { z: -0 }, "", '{"z":0}'],
    [
      "the largest safe integer is written in full",
      { big: 9007199254740991 },
      "",
      '{"big":9007199254740991}',
    ],
    [
      "small numbers use exponents as ECMAScript does",
      { s: 1e-7, t: 0.000001 },
      "",
      '{"s":1e-7,"t":0.000001}',
    ],
    [
      "keys sort by UTF-16 code units, not code points",
      { "\uFB01": 5, "\u{1F600}": 4, é: 3, z: 2, a: 1 },
      "",
      '{"a":1,"z":2,"é":3,"😀":4,"ﬁ":5}',
    ],
    [
      "nested objects and arrays keep array order",
      { b: [3, { y: true, x: null }], a: "s" },
      "",
      '{"a":"s","b":[3,{"x":null,"y":true}]}',
    ],
    ["strings escape only what JSON must", { t: 'a"b\\c\n\u0001é' }, "", '{"t":"a\\"b\\\\c\\n\\u0001é"}'],
    ["the body keeps CRLF", { a: 1 }, "# T\r\n\r\nText\r\n", '{"a":1}'],
    ["an empty body still follows the newline", {}, "", "{}"],
  ])("%s", (_name, frontmatter, body, canonical) => {
    expect(contentHash(frontmatter, body)).toBe(sha256(`${canonical}\n${body}`));
  });

  it("§6 rule 5 the hash is lowercase hex of 64 characters", () => {
    expect(contentHash({}, "")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("§6 rule 5 frontmatter that is not JSON throws (the parser never lets it through)", () => {
    expect(() => contentHash({ n: Number.NaN }, "")).toThrow();
    expect(() => contentHash({ s: "\ud800" }, "")).toThrow();
    expect(() => contentHash(undefined, "")).toThrow();
  });
});

describe("§6 rule 5 content hash of parsed files", () => {
  const file = [
    "---",
    "name: demo",
    "description: D.",
    "inputs:",
    "  n: { type: number, one_of: [1.0, 1e21, -0, 9007199254740991] }",
    "steps:",
    "  - id: done",
    "    finish: ok",
    "---",
    "Body\r\n\r\nMore\r\n",
  ].join("\n");
  const canonical =
    '{"description":"D.","inputs":{"n":{"one_of":[1,1e+21,0,9007199254740991],"type":"number"}},"name":"demo","steps":[{"finish":"ok","id":"done"}]}';

  it("§6 rule 5 parsed numbers hash in canonical form and the body is taken as written", () => {
    const text = file;
    const p = processOf(text);
    expect(p.body).toBe("Body\r\n\r\nMore\r\n");
    expect(p.contentHash).toBe(sha256(`${canonical}\nBody\r\n\r\nMore\r\n`));
  });

  it("§6 rule 5 a leading BOM does not change the hash", () => {
    const text = file;
    expect(processOf(`\uFEFF${text}`).contentHash).toBe(processOf(text).contentHash);
  });

  it("§6 rule 5 an empty body hashes as the frontmatter and one newline", () => {
    const text = file.replace("Body\r\n\r\nMore\r\n", "");
    expect(processOf(text).contentHash).toBe(sha256(`${canonical}\n`));
  });

  it("§6 rule 5 the fixture expense-approval hashes as its hand-transcribed frontmatter", () => {
    const text = readFileSync(
      new URL("../../../fixtures/expense-approval/PROCESS.md", import.meta.url),
      "utf8",
    );
    // The frontmatter transcribed by hand from the file, as JSON values.
    const frontmatter = {
      name: "expense-approval",
      description:
        "Check an expense claim against its receipt and the travel policy, then get the manager's approval.",
      inputs: {
        employee: "person",
        amount: { type: "number", description: "Claimed amount in USD" },
        receiptUrl: "string",
      },
      requires: { systems: ["expense-tool"] },
      steps: [
        {
          id: "check_claim",
          agent:
            "Open the receipt at inputs.receiptUrl. Check that its amount, date and\n" +
            "merchant match the claim, and that the expense is allowed by the travel\n" +
            "policy. Say in your summary what you checked and what you found.\n",
          output: {
            matches: "boolean",
            category: { type: "string", one_of: ["travel", "meals", "equipment", "other"] },
          },
          evidence: ["link"],
          next: [
            { to: "approve", when: "The receipt matches the claim and the policy allows it" },
            { to: "return_to_employee", when: "Anything does not match" },
          ],
        },
        {
          id: "approve",
          person: "manager",
          approve: "Approve when the receipt matches and the expense is within policy.",
          due: "2d",
          on_reject: "check_claim",
          next: "approved",
        },
        {
          id: "return_to_employee",
          task: "Tell the employee what does not match and ask for a corrected claim.",
          person: "inputs.employee",
          next: "returned",
        },
        { id: "approved", finish: "approved" },
        { id: "returned", finish: "returned" },
      ],
    };
    // A canonical serializer sufficient for this data (strings, booleans, small integers): keys
    // sorted by UTF-16 code units, JSON string escaping. Independent of `canonicalize`.
    const canon = (v: unknown): string => {
      if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`;
      if (v !== null && typeof v === "object") {
        const keys = Object.keys(v).sort();
        return `{${keys.map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`).join(",")}}`;
      }
      return JSON.stringify(v);
    };
    const body = text.slice(text.indexOf("\n---\n") + 5);
    expect(body.startsWith("\n# Expense approval\n")).toBe(true);
    const result = parseProcess(text, { folderName: "expense-approval" });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.process.frontmatter).toEqual(frontmatter);
    expect(result.process.body).toBe(body);
    expect(result.process.contentHash).toBe(sha256(`${canon(frontmatter)}\n${body}`));
  });

  it("§6 rule 5 the hash covers the parsed frontmatter, so shorthand and long form differ (checklist 95)", () => {
    const a = processOf(
      [
        "---",
        "name: demo",
        "description: D.",
        "inputs: { x: string }",
        "steps: [{ id: done, finish: ok }]",
        "---",
        "",
      ].join("\n"),
    );
    const b = processOf(
      [
        "---",
        "name: demo",
        "description: D.",
        "inputs: { x: { type: string } }",
        "steps: [{ id: done, finish: ok }]",
        "---",
        "",
      ].join("\n"),
    );
    expect(a.contentHash).not.toBe(b.contentHash);
    // Formatting that does not change the parsed values does not change the hash.
    const c = processOf(
      [
        "---",
        "name: demo",
        "description: D.",
        "inputs:",
        "  x: string",
        "steps:",
        "  - id: done",
        "    finish: ok",
        "---",
        "",
      ].join("\n"),
    );
    expect(c.contentHash).toBe(a.contentHash);
  });
});
