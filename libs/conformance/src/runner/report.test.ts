import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { validateXML } from "xmllint-wasm";
import { type Check, checkLines, junitXml, type Report, specOf, summaryLine } from "./report.ts";

/**
 * The runner's report (issue #18): a line per check naming the rule it proves and, failed, what
 * broke; the summary; JUnit XML that validates against `libs/conformance/junit.xsd` whatever the
 * titles and messages hold.
 */

const XSD = readFileSync(new URL("../../junit.xsd", import.meta.url), "utf8");

async function problems(xml: string): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: "report.xml", contents: xml }],
    schema: [{ fileName: "junit.xsd", contents: XSD }],
  });
  return result.errors.map((e) => e.message);
}

const check = (state: Check["state"], extra: Partial<Check> = {}): Check => ({
  name: `conformance › §4 writes › [R2-5 #50] a replay <returns> "the same" & more (§2.3, §4)`,
  group: "conformance › §4 writes",
  title: `[R2-5 #50] a replay <returns> "the same" & more (§2.3, §4)`,
  tags: ["R2-5", "#50"],
  spec: "§2.3, §4",
  state,
  durationMs: 1234,
  ...extra,
});

const report = (checks: Check[], errors: string[] = []): Report => ({
  url: "http://127.0.0.1:7800/mcp",
  checks,
  errors,
  summary: {
    total: checks.length,
    passed: checks.filter((c) => c.state === "passed").length,
    failed: checks.filter((c) => c.state === "failed").length,
    skipped: checks.filter((c) => c.state === "skipped").length,
  },
});

describe("the runner's report (docs/conformance-runner.md)", () => {
  it("the spec sections are the title's closing parentheses", () => {
    expect(specOf("[R2-5] expense: a replay (§2.3, §4)")).toBe("§2.3, §4");
    expect(specOf("[#44] describe advertises the lease (tools.md describe)")).toBe("tools.md describe");
    expect(specOf("a title (without a section)")).toBe("");
    expect(specOf("[#73] due (C §2.2 due, §3.4 returned; checklist #73)")).toBe(
      "C §2.2 due, §3.4 returned; checklist #73",
    );
  });

  it("one line per check; a failure says what broke, a skip why", () => {
    expect(checkLines(check("passed"))).toBe(
      `PASS  conformance › §4 writes › [R2-5 #50] a replay <returns> "the same" & more (§2.3, §4)  [§2.3, §4]`,
    );
    expect(
      checkLines(check("failed", { error: "AssertionError: expected 'forbidden' to be 'conflict'\nat x" })),
    ).toMatch(/^FAIL {2}.*\n {6}broken: AssertionError: expected 'forbidden' to be 'conflict'\n {14}at x$/);
    expect(checkLines(check("skipped", { reason: "moves time" }))).toMatch(
      /^SKIP .*\n {6}reason: moves time$/,
    );
    expect(summaryLine(report([check("passed"), check("failed"), check("skipped")]))).toBe(
      "baton conformance http://127.0.0.1:7800/mcp: 3 checks, 1 passed, 1 failed, 1 skipped",
    );
  });

  it("JUnit XML with passes, failures, skips, an error outside any check and characters XML must escape validates against junit.xsd", async () => {
    const xml = junitXml(
      report(
        [
          check("passed"),
          check("failed", { error: "AssertionError: expected <a> & \"b\"\u0007 to equal 'c'" }),
          check("skipped", {
            reason: "needs the server's manual clock",
            group: "timed conformance › §3.3 leases",
          }),
        ],
        ["Error: beforeAll failed: publish refused"],
      ),
      new Date("2026-12-01T10:00:00.123Z"),
    );
    expect(await problems(xml)).toEqual([]);
    expect(xml).toContain(
      '<testsuites name="baton conformance" tests="4" failures="1" errors="1" skipped="1" time="3.702">',
    );
    expect(xml).toContain(
      "<failure message=\"AssertionError: expected &lt;a&gt; &amp; &quot;b&quot; to equal 'c'\"",
    );
    expect(xml).toContain(`<skipped message="needs the server's manual clock"/>`);
    expect(xml).toContain('timestamp="2026-12-01T10:00:00"');
  });

  it("the schema is not a formality: a report with a bad time, an unknown element or two outcomes in one case is refused", async () => {
    const good = junitXml(report([check("failed", { error: "x" })]));
    expect(await problems(good.replace(/time="1\.234"/, 'time="soon"'))).not.toEqual([]);
    expect(await problems(good.replace("<failure", "<flaky"))).not.toEqual([]);
    expect(await problems(good.replace("</testcase>", '<skipped message="y"/></testcase>'))).not.toEqual([]);
  });
});
