/**
 * Reading a parsed process: `stepById`, `stepNext` (§2.2 "Default: the following step in the list",
 * profiles/parallel.md §2 "the following-step default does not apply inside a branch") and
 * `formatIssue`.
 */

import { describe, expect, it } from "vitest";
import { formatIssue } from "./format.ts";
import { branchMembership, stepById, stepNext } from "./steps.ts";
import { doc, processOf } from "./test-support.ts";

const p = processOf(
  doc([
    "steps:",
    "  - id: a",
    "    agent: A.",
    "  - id: b",
    "    task: B.",
    "    person: clerk",
    "    next: [c, done]",
    "  - id: c",
    "    wait: 1h",
    "    next: done",
    "  - id: done",
    "    finish: ok",
  ]),
);

describe("§2.2 stepById and stepNext", () => {
  it("§2.2 stepById finds a step or returns undefined", () => {
    expect(stepById(p, "c")).toMatchObject({ kind: "wait", duration: "1h", next: "done" });
    expect(stepById(p, "zzz")).toBeUndefined();
  });

  it("§2.2 without next a step continues at the following step", () => {
    expect(stepNext(p, "a")).toBe("b");
  });

  it("§2.2 next as written: a step id, or the list of routes", () => {
    expect(stepNext(p, "c")).toBe("done");
    expect(stepNext(p, "b")).toEqual([{ to: "c" }, { to: "done" }]);
  });

  it("§2.2 a finish and an unknown id have no next", () => {
    expect(stepNext(p, "done")).toBeNull();
    expect(stepNext(p, "nope")).toBeNull();
  });

  it("parallel.md §2 a branch step never takes the following-step default", () => {
    // A hand-made process (not from the parser) whose branch step names no next.
    const fork = processOf(
      doc([
        "steps:",
        "  - id: start",
        "    agent: S.",
        "  - id: fork",
        "    parallel: [x, y]",
        "    next: end",
        "  - id: x",
        "    agent: X.",
        "    next: join",
        "  - id: y",
        "    agent: Y.",
        "    next: join",
        "  - id: end",
        "    finish: ok",
      ]),
    );
    const steps = fork.steps.map((s) => (s.id === "x" && s.kind === "agent" ? { ...s, next: null } : s));
    const edited = { ...fork, steps };
    expect(stepNext(edited, "x")).toBeNull();
    expect(stepNext(fork, "x")).toBe("join");
    expect(stepNext(fork, "fork")).toBe("end");
    expect(branchMembership(fork)).toBe(branchMembership(fork));
    expect(branchMembership(p).size).toBe(0);
  });
});

describe("formatIssue", () => {
  it("prints path:line:col: message", () => {
    expect(
      formatIssue("expense/PROCESS.md", {
        line: 9,
        col: 11,
        message: 'steps[0].next: unknown step "aprove"',
      }),
    ).toBe('expense/PROCESS.md:9:11: steps[0].next: unknown step "aprove"');
  });
});
