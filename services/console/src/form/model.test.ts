import type { Fields } from "@baton/process";
import { describe, expect, it } from "vitest";
import { ExactNumber, writeExactNumbers } from "../exact-number.ts";
import { controlsFor, issuesByTarget, issueTarget, localDateTime, outputOf } from "./model.ts";

const fields = {
  amount: { type: "number", description: "USD" },
  approved: "boolean",
  tier: { type: "string", one_of: ["gold", "silver"] },
  level: { type: "number", one_of: [1, 2.5] },
  due: "date",
  at: "datetime",
  tags: { type: "list", items: "string" },
  counts: { type: "list", items: "number" },
  owner: "person",
  meta: "object",
  remark: { type: "string", optional: true },
} satisfies Fields;

describe("task forms from declared output fields (§2.3, issue #16)", () => {
  it("one control per field, by type: one_of as a choice, booleans, numbers, dates, lists, objects, optional", () => {
    const controls = controlsFor(fields);
    expect(controls.map((c) => [c.name, c.widget, c.optional])).toEqual([
      ["amount", "number", false],
      ["approved", "boolean", false],
      ["tier", "choice", false],
      ["level", "choice", false],
      ["due", "date", false],
      ["at", "datetime", false],
      ["tags", "list", false],
      ["counts", "list", false],
      ["owner", "email", false],
      ["meta", "json", false],
      ["remark", "text", true],
    ]);
    expect(controls[0]?.description).toBe("USD");
    expect(controls[7]?.item?.widget).toBe("number");
    expect(controlsFor(null)).toEqual([]);
  });

  it("output as typed: numbers exact, choices in their declared type, empty fields left out for the server to judge", () => {
    const controls = controlsFor(fields);
    const output = outputOf(
      controls,
      {
        amount: "12345678901234567890",
        approved: "false",
        tier: "1",
        level: "1",
        due: "2026-12-24",
        at: "2026-10-06T09:30",
        tags: ["a", "", "b"],
        counts: ["0.10", "x"],
        owner: "sam@example.com",
        meta: '{"k": [1]}',
        remark: "  ",
      },
      () => -120,
    );
    expect(writeExactNumbers(JSON.stringify(output))).toBe(
      '{"amount":12345678901234567890,"approved":false,"tier":"silver","level":2.5,"due":"2026-12-24",' +
        '"at":"2026-10-06T09:30:00+02:00","tags":["a","b"],"counts":[0.10,"x"],"owner":"sam@example.com","meta":{"k":[1]}}',
    );
    // Not a JSON number: sent as typed, so the engine says `expected number` by the field.
    expect(outputOf(controlsFor({ n: "number" }), { n: "twelve" })).toEqual({ n: "twelve" });
    expect(outputOf(controlsFor({ o: "object" }), { o: "{oops" })).toEqual({ o: "{oops" });
    expect(outputOf(controls, {})).toEqual({});
  });

  it("exact numbers survive JSON.stringify inside any structure and only there", () => {
    const body = JSON.stringify({ a: [new ExactNumber("-1.50e+3")], b: "\u0000number:1\u0000 stays text?" });
    expect(writeExactNumbers(body)).toBe('{"a":[-1.50e+3],"b":"\\u0000number:1\\u0000 stays text?"}');
    expect(() => new ExactNumber("1.")).toThrow();
  });

  it("datetime-local gets the browser's offset (RFC 3339)", () => {
    expect(localDateTime("2026-10-06T09:30", 0)).toBe("2026-10-06T09:30:00+00:00");
    expect(localDateTime("2026-10-06T09:30:15", 330)).toBe("2026-10-06T09:30:15-05:30");
  });

  it("refusals go to the fields they name", () => {
    expect(issueTarget("output.amount: expected number")).toBe("output.amount");
    expect(issueTarget("output.tags[2]: expected string")).toBe("output.tags");
    expect(issueTarget("evidence: file required")).toBe("evidence");
    expect(issueTarget("evidence f_000: not found")).toBe("evidence");
    expect(issueTarget("next: required, one of approve, decline")).toBe("next");
    expect(issueTarget("reason: required")).toBe("reason");
    expect(issueTarget('note: required with decision "rejected"')).toBe("note");
    expect(issueTarget("summary: blank; leave it out or say what was done")).toBe("summary");
    expect(issueTarget("runDataBytes: over the limit")).toBe("");
    expect([...issuesByTarget(["output.a: missing", "output.b: missing", "output.a: not declared"])]).toEqual(
      [
        ["output.a", ["output.a: missing", "output.a: not declared"]],
        ["output.b", ["output.b: missing"]],
      ],
    );
  });
});
