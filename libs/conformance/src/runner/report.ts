import type { Reporter, TestCase, TestModule } from "vitest/node";
import { tagsOf } from "../items.ts";

/**
 * What a conformance run found, check by check, and how the runner prints it: one line per check
 * with the spec sections it proves, a summary, JSON (`--json`) and JUnit XML (`--junit FILE`).
 */

/** One check: a scenario test, named by its describe path and title. */
export interface Check {
  /** The describe path and title, joined by " › " (the title as Baton's suite names it). */
  name: string;
  /** The scenario group (the describe path). */
  group: string;
  /** The title, its bracketed item tags included. */
  title: string;
  /** The items it proves (docs/conformance-matrix.md ids). */
  tags: string[];
  /** The specification sections it names (the title's closing parentheses), or "" when it names none. */
  spec: string;
  state: "passed" | "failed" | "skipped";
  /** Skipped: why. */
  reason?: string;
  /** Failed: what broke (the first lines of the assertion or error). */
  error?: string;
  durationMs: number;
}

/** A whole run. */
export interface Report {
  /** The MCP endpoint. */
  url: string;
  checks: Check[];
  /** Errors outside any check (a setup that failed, an error thrown after a check ended). */
  errors: string[];
  summary: { total: number; passed: number; failed: number; skipped: number };
}

/** The spec sections a title names in its closing parentheses, e.g. "§2.3, §4" or "tools.md decide". */
export function specOf(title: string): string {
  const m = /\(([^()]*(?:§|\.md\b)[^()]*)\)\s*$/.exec(title);
  return m ? (m[1] as string) : "";
}

const firstLines = (text: string, n = 4) =>
  text
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "")
    .slice(0, n)
    .join("\n");

/** A test's describe path (joined by " › "), title and item tags. */
export function namesOf(test: TestCase): { group: string; title: string; tags: string[] } {
  const path: string[] = [];
  for (let p = test.parent; p.type === "suite"; p = p.parent) path.unshift(p.name);
  return { group: path.join(" › "), title: test.name, tags: tagsOf(test.name) };
}

function checkOf(test: TestCase): Check | null {
  const result = test.result();
  // Pending, or left out by --only (vitest marks a test its name filter leaves out as skipped, with no note).
  if (result.state === "pending" || (result.state === "skipped" && test.options.mode !== "run")) return null;
  const { group, title, tags } = namesOf(test);
  const check: Check = {
    name: group ? `${group} › ${title}` : title,
    group,
    title,
    tags,
    spec: specOf(test.name),
    state: result.state,
    durationMs: Math.round(test.diagnostic()?.duration ?? 0),
  };
  if (result.state === "skipped") check.reason = result.note ?? "skipped";
  if (result.state === "failed")
    check.error = firstLines(
      (result.errors ?? []).map((e) => `${e.name ?? "Error"}: ${e.message}`).join("\n") || "failed",
    );
  return check;
}

/** One line (two for a failure or a skip) for a check. */
export function checkLines(check: Check): string {
  const mark = { passed: "PASS", failed: "FAIL", skipped: "SKIP" }[check.state];
  const spec = check.spec ? `  [${check.spec}]` : "";
  const head = `${mark}  ${check.name}${spec}`;
  if (check.state === "failed")
    return `${head}\n      broken: ${(check.error ?? "").replace(/\n/g, "\n              ")}`;
  if (check.state === "skipped") return `${head}\n      reason: ${check.reason}`;
  return head;
}

/** The closing line: "N checks: P passed, F failed, S skipped". */
export function summaryLine(report: Report): string {
  const s = report.summary;
  return `baton conformance ${report.url}: ${s.total} checks, ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped`;
}

/** The skip reasons with their counts, most frequent first. */
export function skipReasons(report: Report): [string, number][] {
  const counts = new Map<string, number>();
  for (const c of report.checks)
    if (c.state === "skipped") counts.set(c.reason ?? "", (counts.get(c.reason ?? "") ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}

const xml = (text: string) =>
  text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: characters XML 1.0 cannot carry
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");

/**
 * The report as JUnit XML (libs/conformance/junit.xsd): one `testsuite` per scenario group, one
 * `testcase` per check (`classname` the group, `name` the title), `failure` with the broken rule,
 * `skipped` with the reason; errors outside checks as one `error` case.
 */
export function junitXml(report: Report, timestamp = new Date()): string {
  const groups = new Map<string, Check[]>();
  for (const c of report.checks) groups.set(c.group, [...(groups.get(c.group) ?? []), c]);
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const stamp = timestamp.toISOString().replace(/\.\d+Z$/, "");
  const suites = [...groups.entries()].map(([group, checks], id) => {
    const cases = checks.map((c) => {
      const open = `    <testcase name="${xml(c.title)}" classname="${xml(group)}" time="${seconds(c.durationMs)}"`;
      if (c.state === "passed") return `${open}/>`;
      if (c.state === "skipped")
        return `${open}>\n      <skipped message="${xml(c.reason ?? "")}"/>\n    </testcase>`;
      const message = (c.error ?? "").split("\n")[0] ?? "";
      return `${open}>\n      <failure message="${xml(message)}" type="AssertionError">${xml(c.error ?? "")}</failure>\n    </testcase>`;
    });
    const count = (s: Check["state"]) => checks.filter((c) => c.state === s).length;
    const time = seconds(checks.reduce((t, c) => t + c.durationMs, 0));
    return `  <testsuite name="${xml(group)}" id="${id}" tests="${checks.length}" failures="${count("failed")}" errors="0" skipped="${count("skipped")}" time="${time}" timestamp="${stamp}">\n${cases.join("\n")}\n  </testsuite>`;
  });
  if (report.errors.length > 0)
    suites.push(
      `  <testsuite name="outside any check" id="${suites.length}" tests="${report.errors.length}" failures="0" errors="${report.errors.length}" skipped="0" time="0.000" timestamp="${stamp}">\n${report.errors
        .map(
          (e, i) =>
            `    <testcase name="error ${i + 1}" classname="outside any check" time="0.000">\n      <error message="${xml(e.split("\n")[0] ?? "")}" type="Error">${xml(e)}</error>\n    </testcase>`,
        )
        .join("\n")}\n  </testsuite>`,
    );
  const s = report.summary;
  const total = seconds(report.checks.reduce((t, c) => t + c.durationMs, 0));
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="baton conformance" tests="${s.total + report.errors.length}" failures="${s.failed}" errors="${report.errors.length}" skipped="${s.skipped}" time="${total}">\n${suites.join("\n")}\n</testsuites>\n`;
}

/**
 * The vitest reporter of a run: prints each check's line as it ends (unless `quiet`, for `--json`)
 * and keeps the {@link Report}.
 */
export class ConformanceReporter implements Reporter {
  readonly checks: Check[] = [];
  readonly errors: string[] = [];

  constructor(
    private readonly url: string,
    private readonly write: (text: string) => void,
    private readonly quiet: boolean,
  ) {}

  onTestCaseResult(test: TestCase): void {
    const check = checkOf(test);
    if (!check) return;
    this.checks.push(check);
    if (!this.quiet) this.write(`${checkLines(check)}\n`);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<{ message?: string }>): void {
    for (const m of modules)
      for (const e of m.errors()) this.errors.push(firstLines(`${e.name}: ${e.message}`, 8));
    for (const e of unhandled) this.errors.push(firstLines(String(e.message ?? e), 8));
  }

  /** The run so far as a {@link Report}. */
  report(): Report {
    const count = (s: Check["state"]) => this.checks.filter((c) => c.state === s).length;
    return {
      url: this.url,
      checks: this.checks,
      errors: this.errors,
      summary: {
        total: this.checks.length,
        passed: count("passed"),
        failed: count("failed"),
        skipped: count("skipped"),
      },
    };
  }
}
