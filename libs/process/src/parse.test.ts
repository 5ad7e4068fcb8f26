/**
 * Splitting the file and reading the frontmatter: ARCHITECTURE "Contracts fixed now" (frontmatter
 * and body, numbers never rounded) and specification §2.1 (YAML 1.2 core schema, duplicate keys).
 */

import { describe, expect, it } from "vitest";
import { parseProcess } from "./parse.ts";
import { doc, FINISH_ONLY, HEAD, issuesOf, processOf } from "./test-support.ts";

const VALID_FRONTMATTER = [...HEAD.slice(1), ...FINISH_ONLY];

describe("§2 splitting frontmatter and body", () => {
  it.each([
    ["", "an empty file"],
    ["name: demo\n", "no delimiter"],
    ["--- \nname: demo\n---\n", "a delimiter with a trailing space"],
    ["----\nname: demo\n----\n", "four hyphens"],
    ["\n---\nname: demo\n---\n", "a blank first line"],
  ])("§2 the first line must be exactly --- (%j: %s)", (text) => {
    expect(issuesOf(text)).toEqual(['1:1 frontmatter: the file must start with a line "---"']);
  });

  it("§2 the frontmatter must be closed by a line ---", () => {
    const message = '1:1 frontmatter: no closing "---" line; end the frontmatter with a line "---"';
    expect(issuesOf("---\nname: demo\n")).toEqual([message]);
    expect(issuesOf("---")).toEqual([message]);
    expect(issuesOf("---\nname: demo\n--- \n# Body\n")).toEqual([message]);
  });

  it("§2 the body is everything after the closing line's line ending, byte for byte", () => {
    const body = "\n  # Title  \n\n---\nText with a --- line above.\n\n\n";
    expect(processOf(`---\n${VALID_FRONTMATTER.join("\n")}\n---\n${body}`).body).toBe(body);
  });

  it("§2 the body may be empty, including when the file ends right after ---", () => {
    const fm = VALID_FRONTMATTER.join("\n");
    expect(processOf(`---\n${fm}\n---\n`).body).toBe("");
    expect(processOf(`---\n${fm}\n---`).body).toBe("");
    expect(processOf(`---\r\n${fm}\r\n---\r`).body).toBe("");
  });

  it("§2 CRLF delimiters are accepted and the body keeps its CRLF", () => {
    const text = `---\r\n${VALID_FRONTMATTER.join("\r\n")}\r\n---\r\n# Title\r\n\r\nText\r\n`;
    const p = processOf(text);
    expect(p.body).toBe("# Title\r\n\r\nText\r\n");
    expect(p.frontmatter).toEqual(processOf(text.replaceAll("\r\n", "\n")).frontmatter);
  });

  it("§2 one leading BOM is dropped and lines are counted as without it", () => {
    const text = doc(["steps:", "  - id: done", "    finish: 5d"]);
    const withBom = `\uFEFF${text}`;
    expect(issuesOf(withBom)).toEqual(issuesOf(text));
    const valid = doc(FINISH_ONLY);
    expect(processOf(`\uFEFF${valid}`)).toEqual(processOf(valid));
    expect(issuesOf("\uFEFFname: x\n")).toEqual(['1:1 frontmatter: the file must start with a line "---"']);
  });

  it("§2 a second BOM is not dropped", () => {
    expect(issuesOf(`\uFEFF\uFEFF${doc(FINISH_ONLY)}`)).toEqual([
      '1:1 frontmatter: the file must start with a line "---"',
    ]);
  });

  it("§2 an empty or non-mapping frontmatter is refused", () => {
    const message = "2:1 frontmatter: expected a mapping with name, description and steps";
    expect(issuesOf("---\n---\n")).toEqual([message]);
    expect(issuesOf("---\n# only a comment\n---\n")).toEqual([message]);
    expect(issuesOf("---\nhello\n---\n")).toEqual([message]);
    expect(issuesOf("---\n- a\n- b\n---\n")).toEqual([message]);
  });

  const LONE =
    "contains a lone surrogate (\\ud800), which has no UTF-8 form, so it can be neither hashed nor stored; send well-formed Unicode (a surrogate only as half of a pair)";
  const NUL =
    "contains NUL (\\u0000), which PostgreSQL cannot store; remove it or send it escaped in your own notation";

  it("§2 a lone surrogate in the body is refused (it has no UTF-8 form to hash)", () => {
    expect(issuesOf(`${doc(FINISH_ONLY)}ok \ud800\n`)).toEqual([`9:4 body: ${LONE}`]);
  });

  it("issue #8: NUL anywhere in the file is refused where it stands, one issue a line (PostgreSQL cannot store it)", () => {
    expect(issuesOf(`${doc(FINISH_ONLY)}ok \u0000 and \u0000\n\u0000\n`)).toEqual([
      `9:4 body: ${NUL}`,
      `10:1 body: ${NUL}`,
    ]);
    const inValue = doc(FINISH_ONLY).replace("A demo process.", "A demo\u0000 process.");
    expect(issuesOf(inValue)).toEqual([`3:20 frontmatter: ${NUL}`]);
    const inComment = doc(FINISH_ONLY).replace("A demo process.", "A demo process. # a\u0000b");
    expect(issuesOf(inComment)).toEqual([`3:33 frontmatter: ${NUL}`]);
    const inKey = doc([...FINISH_ONLY, "inputs:", "  a\u0000b: string"]);
    expect(issuesOf(inKey)).toEqual([
      "8:3 inputs.a\u0000b: a field name cannot contain control characters",
      `8:4 frontmatter: ${NUL}`,
    ]);
  });

  it("issue #8: a lone surrogate in a comment is refused where it stands (only an API caller can send one: files are UTF-8)", () => {
    const text = doc(FINISH_ONLY).replace("A demo process.", "A demo process. # a\udc00b");
    expect(issuesOf(text)).toEqual([`3:33 frontmatter: ${LONE.replace("d800", "dc00")}`]);
  });

  it("§2 parseProcess never throws, whatever it is given", () => {
    expect(parseProcess(undefined as unknown as string)).toEqual({
      ok: false,
      issues: [{ line: 1, col: 1, message: "frontmatter: the file is not text" }],
    });
    const deep = `---\ndescription: ${"[".repeat(5000)}${"]".repeat(5000)}\n---\n`;
    expect(issuesOf(deep)).toEqual(["2:797 frontmatter: nested too deeply"]);
  });
});

describe("§2.1 YAML 1.2, core schema only", () => {
  it("§2.1 yes, no, on, off, y and n are strings", () => {
    const p = processOf(
      doc([
        "inputs:",
        "  answer: { type: string, one_of: [yes, no, on, off, y, n, Yes, NO] }",
        ...FINISH_ONLY,
      ]),
    );
    expect((p.inputs.answer as { one_of: unknown[] }).one_of).toEqual([
      "yes",
      "no",
      "on",
      "off",
      "y",
      "n",
      "Yes",
      "NO",
    ]);
    expect(
      processOf(doc(FINISH_ONLY).replace("description: A demo process.", "description: no")).description,
    ).toBe("no");
  });

  it("§2.1 True and FALSE are booleans (core schema)", () => {
    const p = processOf(doc(["inputs:", "  flag: { type: boolean, one_of: [True, FALSE] }", ...FINISH_ONLY]));
    expect((p.inputs.flag as { one_of: unknown[] }).one_of).toEqual([true, false]);
  });

  it("§2.1 duplicate keys are refused, at the repeated key", () => {
    expect(
      issuesOf(`---\nname: demo\nname: demo\ndescription: D.\n${FINISH_ONLY.join("\n")}\n---\n`),
    ).toEqual(["3:1 name: duplicate key; each key may appear once"]);
    expect(issuesOf(doc(["steps:", "  - id: done", "    finish: ok", "    finish: done"]))).toEqual([
      "7:5 steps[0].finish: duplicate key; each key may appear once",
    ]);
    expect(issuesOf(doc(["inputs:", "  a: { type: string, type: number }", ...FINISH_ONLY]))).toEqual([
      "5:22 inputs.a.type: duplicate key; each key may appear once",
    ]);
  });

  it("§2.1 aliases are refused (they can expand a small file enormously); a bare anchor changes nothing", () => {
    expect(issuesOf(doc(["inputs:", "  a: &t string", "  b: *t", ...FINISH_ONLY]))).toEqual([
      "6:6 inputs.b: aliases (*t) are not allowed; write the value out",
    ]);
    expect(processOf(doc(["inputs:", "  a: &t string", ...FINISH_ONLY])).inputs).toEqual({ a: "string" });
  });

  it("issue #12: an alias bomb (billion laughs) is refused without being expanded, each alias at its place", () => {
    // Nine levels of ten aliases each would expand to 10^9 strings if any reader resolved them.
    const lines = ["inputs:", '  l0: &l0 "lol"'];
    for (let level = 1; level <= 9; level++) {
      const refs = Array.from({ length: 10 }, () => `*l${level - 1}`).join(", ");
      lines.push(`  l${level}: &l${level} [${refs}]`);
    }
    const issues = issuesOf(doc([...lines, ...FINISH_ONLY]));
    const aliases = issues.filter((i) => i.includes("aliases (*l"));
    expect(aliases[0]).toMatch(
      /^6:\d+ inputs\.l1\[0\]: aliases \(\*l0\) are not allowed; write the value out$/,
    );
    // 90 aliases, each one issue, never 10^9 of anything.
    expect(aliases).toHaveLength(90);
  });

  it("§2.1 YAML 1.1 merge keys are refused", () => {
    expect(issuesOf(doc(["inputs:", "  <<: { a: string }", ...FINISH_ONLY]))).toEqual([
      "5:3 inputs: merge keys (<<) are not allowed; write the keys out",
    ]);
  });

  it.each([
    [
      "!foo x",
      "3:14 description: tag !foo is not allowed; the frontmatter uses the YAML 1.2 core schema only",
    ],
    [
      "!!binary eA==",
      "3:14 description: tag !!binary is not allowed; the frontmatter uses the YAML 1.2 core schema only",
    ],
    [
      "!!timestamp 2026-10-06",
      "3:14 description: tag !!timestamp is not allowed; the frontmatter uses the YAML 1.2 core schema only",
    ],
    ["!!int abc", "3:14 description: the value does not fit its tag !!int"],
    ["!!map [a]", "3:14 description: the value does not fit its tag !!map"],
  ])("§2.1 tags outside the core schema are refused, at the tag (%s)", (value, issue) => {
    const text = doc(FINISH_ONLY).replace("description: A demo process.", `description: ${value}`);
    expect(issuesOf(text)).toEqual([issue]);
  });

  it("§2.1 a refused tag is reported where the tag is written (after an anchor, before a line break, in a list, on a key)", () => {
    const lines = [
      "steps:",
      "  - id: a",
      "    agent: &x !foo", // 6
      "      text",
      "    next: [!!int abc, done]", // 8
      "    !!int 3: x", // 9
      "  - id: done",
      "    finish: !!map [a]", // 11
    ];
    expect(issuesOf(doc(lines))).toEqual([
      "6:15 steps[0].agent: tag !foo is not allowed; the frontmatter uses the YAML 1.2 core schema only",
      "8:12 steps[0].next[0]: the value does not fit its tag !!int",
      "9:5 steps[0]: keys must be plain text",
      "11:13 steps[1].finish: the value does not fit its tag !!map",
    ]);
  });

  it("§2.1 core schema tags are read as the core schema says", () => {
    const text = doc(FINISH_ONLY).replace("description: A demo process.", "description: !!str 12");
    expect(processOf(text).description).toBe("12");
  });

  it("§2.1 the non-specific tag ! makes a scalar text, and !!float takes a plain integer (YAML 1.2 core schema; review finding)", () => {
    const text = doc([
      "inputs:",
      "  size: { type: number, one_of: [!!float 1, !!float -2, !!float 2.5] }",
      "  code: { type: string, one_of: [! 12, ! true] }",
      "  meta: ! { type: object }",
      ...FINISH_ONLY,
    ]).replace("description: A demo process.", "description: ! 12");
    const p = processOf(text);
    expect(p.description).toBe("12");
    expect(p.inputs.size).toEqual({ type: "number", one_of: [1, -2, 2.5] });
    expect(p.inputs.code).toEqual({ type: "string", one_of: ["12", "true"] });
    expect(p.inputs.meta).toEqual({ type: "object" });
    expect(
      issuesOf(doc(FINISH_ONLY).replace("description: A demo process.", "description: !!float 1x")),
    ).toEqual(["3:14 description: the value does not fit its tag !!float"]);
  });

  it("§2.1 a %YAML directive for another version is refused", () => {
    expect(
      issuesOf(`---\n%YAML 1.1\n--- {name: demo, description: D., steps: [{id: done, finish: ok}]}\n---\n`),
    ).toEqual(["2:1 frontmatter: %YAML 1.1 is not allowed; the frontmatter is YAML 1.2"]);
  });

  it("§2.1 the frontmatter is one YAML document", () => {
    expect(issuesOf(`---\n${VALID_FRONTMATTER.join("\n")}\n...\nmore: 1\n---\n`)).toEqual([
      "8:1 frontmatter: must be one YAML document; found 2",
    ]);
    expect(issuesOf(`---\n${VALID_FRONTMATTER.join("\n")}\n--- \nmore: 1\n---\n`)).toEqual([
      "7:1 frontmatter: must be one YAML document; found 2",
    ]);
  });

  it("§2.1 YAML syntax errors are reported at their position", () => {
    expect(issuesOf(doc(["steps:", "\t- id: done"]))).toEqual([
      "5:1 frontmatter: tabs are not allowed as indentation",
    ]);
    expect(issuesOf(doc(["steps:", "  - id: a", "   agent: x"]))).toEqual([
      "6:1 frontmatter: sequence item without - indicator",
    ]);
  });

  it("§2.1 keys are strings", () => {
    expect(issuesOf(doc([...FINISH_ONLY, "1: x"]))).toEqual([
      "7:1 frontmatter: key 1 is not text; keys must be strings",
    ]);
    expect(issuesOf(doc([...FINISH_ONLY, "null: x"]))).toEqual([
      "7:1 frontmatter: key null is not text; keys must be strings",
    ]);
    expect(issuesOf(doc(["inputs:", "  ? [a]", "  : string", ...FINISH_ONLY]))).toEqual([
      "5:5 inputs: keys must be plain text",
    ]);
  });

  it("§2.1 text with a lone surrogate is refused (no UTF-8 form, so no hash)", () => {
    const text = doc(FINISH_ONLY).replace("description: A demo process.", 'description: "\\ud800"');
    expect(issuesOf(text)).toEqual([
      "3:14 description: text contains a lone surrogate, which has no UTF-8 form",
    ]);
  });

  it("issue #8: text or a key that a YAML escape makes NUL is refused at the value (PostgreSQL cannot store it)", () => {
    const text = doc([...FINISH_ONLY, "inputs:", '  "a\\0b": string']).replace(
      "description: A demo process.",
      'description: "a\\0b"',
    );
    expect(issuesOf(text)).toEqual([
      "3:14 description: text contains NUL (\\u0000), which PostgreSQL cannot store",
      "8:3 inputs: key contains NUL (\\u0000), which PostgreSQL cannot store",
    ]);
  });

  it("§2.1 nesting deeper than 64 levels is refused", () => {
    const text = doc(FINISH_ONLY).replace(
      "description: A demo process.",
      `description: ${"[".repeat(70)}${"]".repeat(70)}`,
    );
    const issues = issuesOf(text);
    expect(issues).toContain("3:14 description: must be non-empty text");
    expect(
      issues.some(
        (i) => i.startsWith("3:78 description[0]") && i.endsWith(": nested more than 64 levels deep"),
      ),
    ).toBe(true);
  });
});

describe("numbers are never rounded (ARCHITECTURE, §2.3)", () => {
  /** A number field whose one_of holds `token`, on line 5 at column 38. */
  const withNumber = (token: string) =>
    doc(["inputs:", `  n: { type: number, one_of: [${token}] }`, ...FINISH_ONLY]);
  const stored = (token: string) => (processOf(withNumber(token)).inputs.n as { one_of: number[] }).one_of[0];

  it.each([
    [
      "0.1000000000000000000001",
      "0.1000000000000000000001 cannot be held exactly as a JSON number (it would become 0.1); numbers are never rounded",
    ],
    [
      "9007199254740993.0",
      "9007199254740993.0 cannot be held exactly as a JSON number (it would become 9007199254740992); numbers are never rounded",
    ],
    [
      "1e-400",
      "1e-400 cannot be held exactly as a JSON number (it would become 0); numbers are never rounded",
    ],
    [
      "9007199254740993",
      "integer 9007199254740993 is beyond ±9007199254740991, which JSON parsers cannot hold exactly; numbers are never rounded",
    ],
    [
      "9007199254740992",
      "integer 9007199254740992 is beyond ±9007199254740991, which JSON parsers cannot hold exactly; numbers are never rounded",
    ],
    [
      "-9007199254740992",
      "integer -9007199254740992 is beyond ±9007199254740991, which JSON parsers cannot hold exactly; numbers are never rounded",
    ],
    [
      "0x20000000000001",
      "integer 0x20000000000001 is beyond ±9007199254740991, which JSON parsers cannot hold exactly; numbers are never rounded",
    ],
    [".inf", ".inf is not a JSON number; use a finite number"],
    ["-.Inf", "-.Inf is not a JSON number; use a finite number"],
    [".nan", ".nan is not a JSON number; use a finite number"],
    ["1e400", "1e400 is not a JSON number; use a finite number"],
  ])("a number token %s is refused at its position", (token, message) => {
    expect(issuesOf(withNumber(token))).toEqual([`5:31 inputs.n.one_of[0]: ${message}`]);
  });

  it.each([
    ["9007199254740991", 9007199254740991],
    ["-9007199254740991", -9007199254740991],
    ["1e21", 1e21],
    ["1E+21", 1e21],
    ["1.10", 1.1],
    ["0.1", 0.1],
    ["2.5e-7", 2.5e-7],
    ["123456789.125", 123456789.125],
    ["1.7976931348623157e308", 1.7976931348623157e308],
    ["5e-324", 5e-324],
    ["1.0", 1],
    ["+.5", 0.5],
    ["7.", 7],
    ["0x1F", 31],
    ["0o17", 15],
    ["00012", 12],
  ])("a number token %s is kept exactly", (token, value) => {
    expect(stored(token)).toBe(value);
  });

  it("-0 is a JSON number and is kept", () => {
    expect(Object.is(stored("-0"), -0)).toBe(true);
    expect(Object.is(stored("-0.0"), -0)).toBe(true);
  });
});
