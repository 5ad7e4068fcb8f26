import { APPROVAL_INPUTS, APPROVAL_ROLE, APPROVAL_STEP, DECISIONS } from "@baton/approval";
import { parseProcess } from "@baton/process";
import { describe, expect, it } from "vitest";
import { approvalProcess, parseTiers } from "./approvals.ts";

/**
 * `baton approvals` (issue #17 deliver 1): the generated `tool-approval-<tier>` processes pass the
 * parser `baton validate` uses (§2), as a folder of their own name (§2.1), and have the shape the
 * approval client relies on: the request's inputs (§2.3), one person `task` step for the tier's role
 * with the `due` given (§2.2), whose routes lead to the finishes approved, denied and skipped (§3.2).
 */
describe("approval processes", () => {
  for (const [tier, due] of [
    ["high", "15m"],
    ["critical", undefined],
    ["payments-over-10k", "3d"],
    ["x".repeat(50), "4h"],
  ] as const) {
    it(`tool-approval-${tier.slice(0, 20)} with due ${due ?? "none"} validates and has the approval's shape (§2, §2.2, §3.2)`, () => {
      const { name, source } = approvalProcess(tier, due);
      expect(name).toBe(`tool-approval-${tier}`);
      const parsed = parseProcess(source, { folderName: name });
      if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
      const p = parsed.process;
      expect(Object.keys(p.inputs)).toEqual(Object.keys(APPROVAL_INPUTS));
      expect(p.inputs.riskTier).toMatchObject({ type: "string", one_of: [tier] });
      for (const [field, decl] of Object.entries(p.inputs))
        expect(typeof decl === "object" && decl.optional === true, field).toBe(
          field === "callerRunId" || field === "context",
        );
      const [review, ...finishes] = p.steps;
      expect(review).toMatchObject({
        id: APPROVAL_STEP,
        kind: "task",
        person: APPROVAL_ROLE,
        output: null,
        evidence: null,
        due: due ?? null,
      });
      expect(review?.kind === "task" && review.next).toEqual(
        DECISIONS.map((d) => ({ to: d, when: expect.any(String) })),
      );
      expect(finishes.map((s) => (s.kind === "finish" ? [s.id, s.outcome] : s.kind))).toEqual(
        DECISIONS.map((d) => [d, d]),
      );
    });
  }

  it("refuses a tier that cannot name a process and a due that is not a duration (§2.1, §2.4)", () => {
    expect(() => approvalProcess("Critical", undefined)).toThrow(/lowercase/);
    expect(() => approvalProcess("x".repeat(51), undefined)).toThrow(/at most 50/);
    expect(() => approvalProcess("high", "15 minutes")).toThrow(/--due 15 minutes/);
    expect(() => approvalProcess("high", "1w")).toThrow(/duration/);
  });

  it("reads --tier values, every problem at once", () => {
    expect(parseTiers(["high=security", "critical=security-leads"])).toEqual({
      tiers: [
        { tier: "high", group: "security" },
        { tier: "critical", group: "security-leads" },
      ],
    });
    expect(parseTiers(["high", "=g", "High=g", "low=a", "low=b"])).toEqual({
      problems: [
        "--tier high: use <tier>=<group>, e.g. critical=security",
        "--tier =g: use <tier>=<group>, e.g. critical=security",
        '--tier High=g: tier "High": use lowercase words joined by hyphens',
        "--tier low=b: low is named twice",
      ],
    });
    expect(parseTiers([])).toEqual({
      problems: ["name at least one tier: --tier <tier>=<group>, e.g. --tier high=security"],
    });
  });
});
