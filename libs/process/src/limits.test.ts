/**
 * Large files and the bounds on a refusal ("Implementing a process server" Step 1: report every
 * issue at once; the bounds are ours, see `issue-limits.ts`): at most 200 issues in document order
 * and one saying how many more, each message at most 500 characters, cycles (§2.2) shortened, and
 * the graph rules (§2.2, parallel.md §2) linear in the file. Sizes and counts are asserted, never
 * elapsed time.
 */

import { describe, expect, it } from "vitest";
import { clipMessage, limitIssues, MAX_MESSAGE } from "./issue-limits.ts";
import { parseProcess } from "./parse.ts";
import { branchMembership } from "./steps.ts";
import { doc, HEAD, issuesOf } from "./test-support.ts";
import type { Issue } from "./types.ts";

const CYCLE_RULE = "following next and on_timeout no step may be visited twice; only on_reject goes back";

/** The issues of `text`; fails the test when it parses. */
function refusal(text: string): Issue[] {
  const result = parseProcess(text);
  if (result.ok) throw new Error("expected issues, the file parsed");
  return result.issues;
}

/** `n` agent steps `s<i>` each routing on and back to `s0`, then the finish `s<n>` (step i on line 5+3i). */
function cycleFile(n: number): string {
  const lines = ["steps:"];
  for (let i = 0; i < n; i++) lines.push(`  - id: s${i}`, "    agent: go", `    next: [s${i + 1}, s0]`);
  lines.push(`  - id: s${n}`, "    finish: ok");
  return doc(lines);
}

describe("Implementing Step 1: every issue at once, within bounds", () => {
  it("§2.2 a file where every step closes a cycle: 200 short issues and a count of the rest", () => {
    const text = cycleFile(5000);
    expect(text.length).toBeGreaterThan(240_000);
    const issues = refusal(text);
    expect(issues).toHaveLength(201);
    expect(`${issues[0]?.line}:${issues[0]?.col} ${issues[0]?.message}`).toBe(
      `7:16 steps[0].next[1]: creates a cycle (s0 → s0); ${CYCLE_RULE}`,
    );
    expect(`${issues[5]?.line}:${issues[5]?.col} ${issues[5]?.message}`).toBe(
      `22:16 steps[5].next[1]: creates a cycle (s0 → s1 → s2 → s3 → s4 → s5 → s0); ${CYCLE_RULE}`,
    );
    expect(`${issues[199]?.line}:${issues[199]?.col} ${issues[199]?.message}`).toBe(
      `604:18 steps[199].next[1]: creates a cycle (s0 → s1 → s2 → … → s199 → s0, 200 steps); ${CYCLE_RULE}`,
    );
    // At the 201st issue: steps[200].next[1], line 607.
    expect(issues[200]).toEqual({
      line: 607,
      col: 18,
      message: "frontmatter: … and 4,800 more issues from here on; fix these first",
    });
    expect(JSON.stringify(issues).length).toBeLessThan(50_000);
  });

  it("§2.2 a long cycle is shown by its first three steps, its last and its length", () => {
    const lines = ["steps:"];
    for (let i = 0; i < 8; i++) lines.push(`  - id: s${i}`, "    agent: go");
    lines.push("    next: [s0, done]", "  - id: done", "    finish: ok");
    expect(issuesOf(doc(lines))).toEqual([
      `21:12 steps[7].next[0]: creates a cycle (s0 → s1 → s2 → … → s7 → s0, 8 steps); ${CYCLE_RULE}`,
    ]);
  });

  it("§2.2 a cycle is reported once, at the first edge that closes it (next and on_timeout to one step)", () => {
    const lines = [
      "steps:",
      "  - id: a", // 5
      "    agent: A.",
      "    next: [w, done]",
      "  - id: w", // 8
      "    wait_for: paid",
      "    timeout: 1d",
      "    next: a", // 11
      "    on_timeout: a", // 12
      "  - id: done",
      "    finish: ok",
    ];
    expect(issuesOf(doc(lines))).toEqual([`11:11 steps[1].next: creates a cycle (a → w → a); ${CYCLE_RULE}`]);
  });

  /** `n` steps, each with one mistake: a `next` naming no step. */
  const unknownTargets = (n: number) => {
    const lines = ["steps:"];
    for (let i = 0; i < n; i++) lines.push(`  - id: s${i}`, "    agent: go", `    next: nope${i}`);
    lines.push("  - id: done", "    finish: ok");
    return doc(lines);
  };

  it("Step 1 up to 200 issues are all listed", () => {
    const issues = refusal(unknownTargets(200));
    expect(issues).toHaveLength(200);
    expect(issues[199]?.message).toBe('steps[199].next: unknown step "nope199"');
  });

  it("Step 1 past 200 issues: the first 200 in document order, then one at the 201st saying how many more", () => {
    const issues = refusal(unknownTargets(201));
    expect(issues).toHaveLength(201);
    expect(issues[199]?.message).toBe('steps[199].next: unknown step "nope199"');
    expect(issues[200]).toEqual({
      line: 607,
      col: 11,
      message: "frontmatter: … and 1 more issue from here on; fix these first",
    });
    const many = refusal(unknownTargets(20_000));
    expect(many).toHaveLength(201);
    expect(many[200]?.message).toBe("frontmatter: … and 19,800 more issues from here on; fix these first");
  });

  it("Step 1 a message is at most 500 characters, cut with …", () => {
    // An explicit key (`? …`): YAML allows implicit keys of at most 1,024 characters.
    const key = "k".repeat(2000);
    const text = `${[...HEAD, `? ${key}`, ": 1", "steps:", "  - id: done", "    finish: ok", "---"].join("\n")}\n`;
    const issues = refusal(text);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.message).toHaveLength(MAX_MESSAGE);
    expect(issues[0]?.message).toBe(`${"k".repeat(MAX_MESSAGE - 1)}…`);
  });

  it("Step 1 cutting a message never splits a surrogate pair", () => {
    const cut = clipMessage(`${"a".repeat(MAX_MESSAGE - 2)}😀 and more`);
    expect(cut).toBe(`${"a".repeat(MAX_MESSAGE - 2)}…`);
    expect(clipMessage("short")).toBe("short");
    expect(limitIssues([{ line: 1, col: 1, message: "x".repeat(600) }])[0]?.message).toHaveLength(
      MAX_MESSAGE,
    );
  });
});

describe("parallel.md §2 at scale", () => {
  it("parallel.md §2 a branch of 20,000 steps listed in order is accepted, every step in it", () => {
    const n = 20_000;
    const lines = [
      "steps:",
      "  - id: start",
      "    agent: go",
      "  - id: fork",
      "    parallel: [b0, c]",
      "    next: done",
    ];
    for (let i = 0; i < n; i++) {
      lines.push(`  - id: b${i}`, "    agent: go", `    next: ${i + 1 < n ? `b${i + 1}` : "join"}`);
    }
    lines.push("  - id: c", "    agent: c", "    next: join", "  - id: done", "    finish: ok");
    const text = doc(lines);
    expect(text.length).toBeGreaterThan(800_000);
    const result = parseProcess(text);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const members = branchMembership(result.process);
    expect(members.size).toBe(n + 1);
    expect(members.get(`b${n - 1}`)).toEqual({ parallel: "fork", entry: "b0" });
  });

  it("parallel.md §2 a branch of 20,000 steps whose last step routes out is reported once, at that edge", () => {
    const n = 20_000;
    const lines = [
      "steps:",
      "  - id: start",
      "    agent: go",
      "  - id: fork",
      "    parallel: [b0, c]",
      "    next: done",
    ];
    for (let i = 0; i < n; i++) {
      lines.push(`  - id: b${i}`, "    agent: go", `    next: ${i + 1 < n ? `b${i + 1}` : "start"}`);
    }
    lines.push("  - id: c", "    agent: c", "    next: join", "  - id: done", "    finish: ok");
    const issues = refusal(doc(lines));
    expect(issues.map((i) => `${i.line}:${i.col} ${i.message}`)).toEqual([
      `${10 + 3 * (n - 1) + 2}:11 steps[${n + 1}].next: "start" is outside this branch; a branch step routes only to steps of its branch or join`,
    ]);
  });
});
