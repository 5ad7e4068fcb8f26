/**
 * Checking values against declarations (specification §2.3, §6 rule 3) with issues in the style
 * of the tool contracts (tools.md submit: `output.cleared: expected boolean`).
 */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FieldDecl, Fields } from "./types.ts";
import {
  checkValue,
  checkValues,
  isDate,
  isDateTime,
  isPersonValue,
  normalizeField,
  parseDateTime,
} from "./values.ts";

describe("§2.3 date", () => {
  it.each([
    "2026-10-06",
    "2024-02-29",
    "2000-02-29",
    "1600-02-29",
    "0000-02-29",
    "0001-01-01",
    "9999-12-31",
    "2026-04-30",
  ])("§2.3 %s is a real calendar date", (s) => expect(isDate(s)).toBe(true));
  it.each([
    "2026-02-29",
    "2100-02-29",
    "1900-02-29",
    "2026-02-30",
    "2026-04-31",
    "2026-13-01",
    "2026-00-10",
    "2026-01-00",
    "2026-1-05",
    "20261006",
    "2026-10-06T00:00:00Z",
    " 2026-10-06",
    "2026-10-06\n",
    "+2026-10-06",
    "",
  ])("§2.3 %j is not a date", (s) => expect(isDate(s)).toBe(false));
  it("§2.3 a date is a string", () => {
    expect(isDate(20261006)).toBe(false);
    expect(isDate(new Date())).toBe(false);
  });
});

describe("§2.3 datetime (RFC 3339 with offset)", () => {
  it.each([
    ["2026-10-06T09:00:00Z", Date.UTC(2026, 9, 6, 9, 0, 0)],
    ["2026-10-06T09:00:00+05:30", Date.UTC(2026, 9, 6, 3, 30, 0)],
    ["2026-10-06T09:00:00-07:00", Date.UTC(2026, 9, 6, 16, 0, 0)],
    ["2026-10-06T09:00:00-00:00", Date.UTC(2026, 9, 6, 9, 0, 0)],
    ["2026-10-06t09:00:00z", Date.UTC(2026, 9, 6, 9, 0, 0)],
    ["2026-10-06T09:00:00.123456789Z", Date.UTC(2026, 9, 6, 9, 0, 0, 124)],
    ["2026-12-01T10:00:00.9565Z", Date.UTC(2026, 11, 1, 10, 0, 0, 957)],
    ["2026-12-01T10:00:00.9560000Z", Date.UTC(2026, 11, 1, 10, 0, 0, 956)],
    ["2026-12-31T23:59:59.9990001Z", Date.UTC(2027, 0, 1, 0, 0, 0, 0)],
    ["1969-12-31T23:59:59.9991Z", 0],
    ["2026-10-06T09:00:00.5Z", Date.UTC(2026, 9, 6, 9, 0, 0, 500)],
    ["2024-02-29T23:59:59+23:59", Date.UTC(2024, 1, 29, 0, 0, 59)],
    ["1969-12-31T23:59:59.999Z", -1],
    ["1970-01-01T00:00:00Z", 0],
    ["0001-01-01T00:00:00Z", -62_135_596_800_000],
    ["9999-12-31T23:59:59.999Z", 253_402_300_799_999],
  ])("§2.3 %s is a datetime at epoch ms %d", (s, ms) => {
    expect(isDateTime(s)).toBe(true);
    expect(parseDateTime(s)).toBe(ms);
  });

  it.each([
    "2026-10-06T09:00:00",
    "2026-10-06 09:00:00Z",
    "2026-10-06T24:00:00Z",
    "2026-10-06T09:60:00Z",
    "2026-10-06T09:00:60Z",
    "2026-10-06T09:00:00+24:00",
    "2026-10-06T09:00:00+05:60",
    "2026-10-06T09:00:00+0530",
    "2026-10-06T09:00:00+05",
    "2026-02-30T09:00:00Z",
    "2026-10-06T09:00Z",
    "2026-10-06T9:00:00Z",
    "2026-10-06T09:00:00.Z",
    "2026-10-06T09:00:00,5Z",
    "2026-10-06",
    "2026-10-06T09:00:00Z ",
    "",
  ])("§2.3 %j is not a datetime", (s) => {
    expect(isDateTime(s)).toBe(false);
    expect(parseDateTime(s)).toBeNull();
  });

  it("§2.3 parseDateTime agrees with Date.UTC on any valid instant and offset", () => {
    const pad = (n: number, w = 2) => String(n).padStart(w, "0");
    fc.assert(
      fc.property(
        fc.date({
          min: new Date("1000-01-01T00:00:00Z"),
          max: new Date("9000-12-31T23:59:59Z"),
          noInvalidDate: true,
        }),
        fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }),
        (date, offset) => {
          // Write the instant as local time at `offset` minutes east of UTC.
          const local = new Date(date.getTime() + offset * 60_000);
          const sign = offset < 0 ? "-" : "+";
          const abs = Math.abs(offset);
          const text =
            `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}` +
            `T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
            `.${pad(local.getUTCMilliseconds(), 3)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
          expect(parseDateTime(text)).toBe(date.getTime());
        },
      ),
      { seed: 20261006, numRuns: 300 },
    );
  });
});

describe("§2.2 §2.3 a datetime between two milliseconds is the later one (issue #8: a deadline never fires early)", () => {
  it("§2.2 parseDateTime is the first whole millisecond at or after the instant written, for any fraction", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -62_135_596_800_000, max: 253_402_300_798_999 }),
        fc.stringMatching(/^[0-9]{0,12}$/),
        (ms, extra) => {
          const text = new Date(ms).toISOString().replace("Z", `${extra}Z`);
          // ms + 0.<extra> ms, rounded up: ms when every extra digit is 0, else ms + 1.
          expect(parseDateTime(text)).toBe(/[1-9]/.test(extra) ? ms + 1 : ms);
        },
      ),
      { seed: 20261201, numRuns: 1000 },
    );
  });
});

describe("§2.3 person (Baton: an email address)", () => {
  it.each(["mira@example.com", "a.b+c@sub.example.org", "x@y.z", "commander@example.org"])(
    "§2.3 %s is a person",
    (s) => expect(isPersonValue(s)).toBe(true),
  );
  it.each([
    "",
    "mira",
    "@example.com",
    "mira@",
    "mira@example",
    "mira@@example.com",
    "a@b@example.com",
    "mi ra@example.com",
    "mira@example..com",
    "mira@.example.com",
    "mira@example.com.",
    "mira@exam\tple.com",
    "mira@example.com\n",
    `${"a".repeat(250)}@b.cd`,
  ])("§2.3 %j is not a person", (s) => expect(isPersonValue(s)).toBe(false));
});

describe("§2.3 checkValue by type", () => {
  it("issue #8: a value quoted in an issue is cut without splitting a surrogate pair (issues are kept in handoff.issues)", () => {
    const value = `${"x".repeat(56)}\u{1F600}${"y".repeat(10)}`;
    expect(checkValue("date", value, "v")).toEqual([
      `v: "${"x".repeat(56)}…" is not a date; use YYYY-MM-DD, a real calendar date`,
    ]);
  });

  it.each<[FieldDecl, unknown, string[]]>([
    ["string", "x", []],
    ["string", 5, ["v: expected string"]],
    ["number", 85.5, []],
    ["number", -0, []],
    ["number", "85.5", ["v: expected number"]],
    ["number", Number.NaN, ["v: expected number"]],
    ["number", Number.POSITIVE_INFINITY, ["v: expected number"]],
    ["boolean", false, []],
    ["boolean", "yes", ["v: expected boolean"]],
    ["date", "2024-02-29", []],
    ["date", "2026-02-30", ['v: "2026-02-30" is not a date; use YYYY-MM-DD, a real calendar date']],
    ["date", 20260230, ["v: expected date (YYYY-MM-DD)"]],
    ["datetime", "2026-10-06T09:00:00Z", []],
    [
      "datetime",
      "2026-10-06T09:00:00",
      ['v: "2026-10-06T09:00:00" is not a datetime; use RFC 3339 with an offset, e.g. 2026-10-06T09:00:00Z'],
    ],
    ["datetime", 0, ["v: expected datetime (RFC 3339 with offset)"]],
    ["person", "mira@example.com", []],
    ["person", "mira", ['v: "mira" is not a person; use an email address']],
    ["person", { email: "mira@example.com" }, ["v: expected person (an email address)"]],
    ["list", [], []],
    ["list", [1, "a", null, {}], ["v[2]: null is not a value"]],
    ["list", "a,b", ["v: expected list"]],
    ["object", {}, []],
    ["object", { any: [null, { deep: true }] }, []],
    ["object", [], ["v: expected object"]],
    ["object", "x", ["v: expected object"]],
    ["object", new Date(0), ["v: expected object"]],
    ["string", null, ["v: null is not a value; expected string"]],
    [{ type: "string", optional: true }, null, ["v: null is not a value; omit an optional field instead"]],
    ["string", undefined, ["v: expected string"]],
  ])("§2.3 %j with %j", (decl, value, issues) => {
    expect(checkValue(decl, value, "v")).toEqual(issues);
  });

  it("§2.3 a bigint is not a JSON number", () => {
    expect(checkValue("number", 10n, "v")).toEqual(["v: expected number"]);
  });

  it("§2.3 a string longer than 60 characters is cut in messages", () => {
    expect(checkValue("date", "x".repeat(80), "v")).toEqual([
      `v: "${"x".repeat(57)}…" is not a date; use YYYY-MM-DD, a real calendar date`,
    ]);
  });
});

describe("§2.3 one_of and items", () => {
  it("§2.3 a value outside one_of is refused", () => {
    const decl: FieldDecl = { type: "string", one_of: ["travel", "meals", "equipment", "other"] };
    expect(checkValue(decl, "x", "inputs.category")).toEqual([
      'inputs.category: "x" is not one of travel, meals, equipment, other',
    ]);
    expect(checkValue(decl, "meals", "inputs.category")).toEqual([]);
    expect(checkValue({ type: "number", one_of: [1, 2.5] }, 3, "n")).toEqual(["n: 3 is not one of 1, 2.5"]);
    expect(checkValue({ type: "number", one_of: [1, 2.5] }, 2.5, "n")).toEqual([]);
    expect(checkValue({ type: "boolean", one_of: [true] }, false, "b")).toEqual([
      "b: false is not one of true",
    ]);
  });

  it("§2.3 one_of is checked only once the type is right", () => {
    expect(checkValue({ type: "number", one_of: [1] }, "1", "n")).toEqual(["n: expected number"]);
  });

  it("§2.3 a datetime in one_of matches the same text only", () => {
    const decl: FieldDecl = { type: "datetime", one_of: ["2026-10-06T09:00:00Z"] };
    expect(checkValue(decl, "2026-10-06T09:00:00Z", "d")).toEqual([]);
    expect(checkValue(decl, "2026-10-06T09:00:00+00:00", "d")).toEqual([
      'd: "2026-10-06T09:00:00+00:00" is not one of 2026-10-06T09:00:00Z',
    ]);
  });

  it("§2.3 items given as a type name are checked at each index", () => {
    expect(checkValue({ type: "list", items: "string" }, ["a", 2, "c", null], "output.tags")).toEqual([
      "output.tags[1]: expected string",
      "output.tags[3]: null is not a value; expected string",
    ]);
  });

  it("§2.3 items given as a field object, nested lists included", () => {
    const decl: FieldDecl = {
      type: "list",
      items: { type: "list", items: { type: "number", one_of: [1, 2] } },
    };
    expect(checkValue(decl, [[1, 2], [3, "x"], "y"], "output.scores")).toEqual([
      "output.scores[1][0]: 3 is not one of 1, 2",
      "output.scores[1][1]: expected number",
      "output.scores[2]: expected list",
    ]);
    expect(checkValue({ type: "list", items: "object" }, [{ amount: 1 }, 5], "output.lines")).toEqual([
      "output.lines[1]: expected object",
    ]);
  });

  it("§2.3 one_of on a list applies inside the list (§6 rule 3 'including inside lists')", () => {
    expect(
      checkValue({ type: "list", items: "string", one_of: ["a", "b"] }, ["a", "z", "b"], "output.tags"),
    ).toEqual(['output.tags[1]: "z" is not one of a, b']);
    expect(checkValue({ type: "list", one_of: ["a"] }, ["a", "b"], "t")).toEqual([
      't[1]: "b" is not one of a',
    ]);
  });

  it("§2.3 a list without items takes any JSON values but null, which is not a value at any list depth; an object's content is free JSON", () => {
    expect(checkValue("list", [1, "a", [], {}, [[2]], { x: null }], "l")).toEqual([]);
    expect(checkValue("list", [null, [1, [null]]], "l")).toEqual([
      "l[0]: null is not a value",
      "l[1][1][0]: null is not a value",
    ]);
    expect(checkValue({ type: "list", one_of: ["a", "b"] }, ["a", null, "c"], "l")).toEqual([
      "l[1]: null is not a value",
      'l[2]: "c" is not one of a, b',
    ]);
  });
});

describe("§2.3 checkValues", () => {
  const fields: Fields = {
    cleared: "boolean",
    summary: "string",
    note: { type: "string", optional: true },
    category: { type: "string", one_of: ["travel", "meals", "equipment", "other"] },
  };

  it("§2.3 a complete, correct object gives no issue; an optional field may be omitted", () => {
    expect(checkValues(fields, { cleared: true, summary: "ok", category: "meals" }, "output")).toEqual([]);
    expect(
      checkValues(fields, { cleared: true, summary: "ok", category: "meals", note: "n" }, "output"),
    ).toEqual([]);
  });

  it("§2.3 every issue at once: declaration order, then undeclared fields in the order given", () => {
    const value = { extra: 1, category: "x", note: null, cleared: "yes", other: 2 };
    expect(checkValues(fields, value, "output")).toEqual([
      "output.cleared: expected boolean",
      "output.summary: missing",
      "output.note: null is not a value; omit an optional field instead",
      'output.category: "x" is not one of travel, meals, equipment, other',
      "output.extra: not declared",
      "output.other: not declared",
    ]);
  });

  it("§2.3 a required field given as null is refused, and undefined counts as missing", () => {
    expect(checkValues({ summary: "string" }, { summary: null }, "output")).toEqual([
      "output.summary: null is not a value; expected string",
    ]);
    expect(checkValues({ summary: "string" }, { summary: undefined }, "output")).toEqual([
      "output.summary: missing",
    ]);
  });

  it.each([[null], [[]], ["text"], [5], [undefined]])(
    "§2.3 a non-object value %j gives one issue",
    (value) => {
      expect(checkValues(fields, value, "output")).toEqual(["output: expected object"]);
    },
  );

  it("§2.3 names that are Object.prototype properties are ordinary names", () => {
    const declared = Object.fromEntries([["constructor", "string"]]) as Fields;
    expect(checkValues(declared, {}, "output")).toEqual(["output.constructor: missing"]);
    expect(checkValues({}, JSON.parse('{"__proto__": 1, "toString": 2}'), "inputs")).toEqual([
      "inputs.__proto__: not declared",
      "inputs.toString: not declared",
    ]);
  });

  it("§2.3 an empty prefix gives bare field names", () => {
    expect(checkValues({ summary: "string" }, {}, "")).toEqual(["summary: missing"]);
  });

  it("§2.3 numbers are never rounded: values are checked, never changed", () => {
    const value = { amount: 85.5, big: 9007199254740991, tiny: 5e-324, sum: 0.1 + 0.2 };
    const copy = structuredClone(value);
    expect(
      checkValues({ amount: "number", big: "number", tiny: "number", sum: "number" }, value, "inputs"),
    ).toEqual([]);
    expect(value).toStrictEqual(copy);
    expect(value.sum).toBe(0.30000000000000004);
  });
});

describe("§2.3 normalizeField", () => {
  it("§2.3 a type name becomes { type }, items too, other keys kept", () => {
    expect(normalizeField("string")).toEqual({ type: "string" });
    expect(normalizeField({ type: "list", items: "number", description: "d" })).toEqual({
      type: "list",
      items: { type: "number" },
      description: "d",
    });
    expect(normalizeField({ type: "list", items: { type: "list", items: "date" } })).toEqual({
      type: "list",
      items: { type: "list", items: { type: "date" } },
    });
  });
});
