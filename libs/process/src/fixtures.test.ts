/**
 * The 12 conformance fixtures (10 core, `major-incident` with the parallel profile, `vendor-check`
 * with the check profile) and the 2 sample processes all parse as valid (specification §2;
 * conformance "Fixtures"), with the profiles (§8), optional tools (§4.2) and roles (§7) they use.
 */

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseProcess } from "./parse.ts";
import { branchMembership, stepById, stepNext } from "./steps.ts";
import type { Process } from "./types.ts";

const CONFORMANCE = [
  "blog-publication",
  "contract-review",
  "customer-offboarding",
  "employee-onboarding",
  "expense-reimbursement",
  "incident-postmortem",
  "invoice-approval",
  "major-incident",
  "major-incident-response",
  "supplier-rfp",
  "support-escalation",
  "vendor-check",
];
const SAMPLES = ["expense-approval", "supplier-onboarding"];

const read = (dir: string, name: string) =>
  readFileSync(new URL(`../../../${dir}/${name}/PROCESS.md`, import.meta.url), "utf8");

function load(dir: string, name: string): Process {
  const result = parseProcess(read(dir, name), { folderName: name });
  if (!result.ok) throw new Error(`${name}: ${JSON.stringify(result.issues, null, 2)}`);
  return result.process;
}

describe("conformance fixtures and samples", () => {
  it.each(CONFORMANCE)("§2 conformance fixture %s parses as valid", (name) => {
    const result = parseProcess(read("conformance/fixtures", name), { folderName: name });
    expect(result.ok ? [] : result.issues).toEqual([]);
  });

  it.each(SAMPLES)("§2 sample %s parses as valid", (name) => {
    const result = parseProcess(read("fixtures", name), { folderName: name });
    expect(result.ok ? [] : result.issues).toEqual([]);
  });

  it.each([
    ["conformance/fixtures", "blog-publication", [], [], ["editor"]],
    [
      "conformance/fixtures",
      "contract-review",
      [],
      ["upload"],
      ["legal-reviewer", "finance-reviewer", "authorized-signatory"],
    ],
    [
      "conformance/fixtures",
      "customer-offboarding",
      [],
      ["send_event"],
      ["account-owner", "finance-collections", "data-steward"],
    ],
    ["conformance/fixtures", "expense-reimbursement", [], ["upload"], ["accounts-payable"]],
    ["conformance/fixtures", "incident-postmortem", [], [], []],
    [
      "conformance/fixtures",
      "major-incident",
      ["parallel-1"],
      [],
      ["operations-lead", "security-lead", "communications-lead"],
    ],
    ["conformance/fixtures", "vendor-check", ["check-1"], ["upload"], ["finance-approver"]],
    ["fixtures", "expense-approval", [], [], ["manager"]],
    ["fixtures", "supplier-onboarding", [], ["upload"], ["finance-approver"]],
  ])("§8 §4.2 §7 %s/%s uses profiles %j, tools %j, roles %j", (dir, name, profiles, tools, roles) => {
    const p = load(dir, name);
    expect(p.profiles).toEqual(profiles);
    expect(p.tools).toEqual(tools);
    expect(p.roles).toEqual(roles);
  });

  it("§2.1 vendor-check and expense-approval carry requires; the others do not", () => {
    expect(load("conformance/fixtures", "vendor-check").requires).toEqual({
      systems: ["sanctions-screening"],
    });
    expect(load("fixtures", "expense-approval").requires).toEqual({ systems: ["expense-tool"] });
    expect(load("conformance/fixtures", "invoice-approval").requires).toBeNull();
  });

  it("§2.2 steps are normalized: kinds, routes as { to, when? }, fields as written, lines of the step", () => {
    const p = load("fixtures", "expense-approval");
    expect(p.name).toBe("expense-approval");
    expect(p.inputs).toEqual({
      employee: "person",
      amount: { type: "number", description: "Claimed amount in USD" },
      receiptUrl: "string",
    });
    expect(p.steps.map((s) => [s.id, s.kind, s.line])).toEqual([
      ["check_claim", "agent", 11],
      ["approve", "approve", 24],
      ["return_to_employee", "task", 31],
      ["approved", "finish", 36],
      ["returned", "finish", 39],
    ]);
    expect(p.steps[0]).toMatchObject({
      kind: "agent",
      output: {
        matches: "boolean",
        category: { type: "string", one_of: ["travel", "meals", "equipment", "other"] },
      },
      evidence: ["link"],
      next: [
        { to: "approve", when: "The receipt matches the claim and the policy allows it" },
        { to: "return_to_employee", when: "Anything does not match" },
      ],
      due: null,
      check: null,
      advisory: null,
    });
    expect(p.steps[1]).toEqual({
      id: "approve",
      line: 24,
      kind: "approve",
      instructions: "Approve when the receipt matches and the expense is within policy.",
      person: "manager",
      next: "approved",
      onReject: "check_claim",
      due: "2d",
    });
    expect(p.body.startsWith("\n# Expense approval\n")).toBe(true);
  });

  it("§2.2 customer-offboarding: wait_until, wait_for with timeout and on_timeout, list routes", () => {
    const p = load("conformance/fixtures", "customer-offboarding");
    expect(stepById(p, "effective_time")).toMatchObject({
      kind: "wait_until",
      path: "inputs.effectiveAt",
      next: null,
    });
    expect(stepById(p, "settlement_event")).toEqual({
      id: "settlement_event",
      line: 34,
      kind: "wait_for",
      event: "final-invoice-settled",
      timeout: "30d",
      onTimeout: "finance_followup",
      next: "verify_settlement",
    });
    expect(stepNext(p, "final_invoice")).toEqual([{ to: "deletion_clearance" }, { to: "settlement_event" }]);
    expect(stepNext(p, "effective_time")).toBe("cancel_services");
  });

  it("parallel.md §1 major-incident: the parallel step and its three branches", () => {
    const p = load("conformance/fixtures", "major-incident");
    expect(stepById(p, "respond")).toMatchObject({
      kind: "parallel",
      branches: ["operations", "security", "communications"],
      next: "close_review",
    });
    expect([...branchMembership(p).keys()]).toEqual(["operations", "security", "communications"]);
    expect(stepNext(p, "security")).toBe("join");
    expect(stepNext(p, "close_review")).toBe("done");
  });

  it("check.md §2 vendor-check: the check is kept as written", () => {
    const step = stepById(load("conformance/fixtures", "vendor-check"), "check_vendor");
    expect(step?.kind).toBe("agent");
    if (step?.kind !== "agent") return;
    expect(Array.isArray(step.check)).toBe(true);
    expect((step.check as unknown[]).length).toBe(3);
    expect((step.check as Record<string, unknown>[])[2]).toEqual({
      ask: "How complete is the screening?",
      levels: [
        "Neither list is clearly covered.",
        "One list is covered.",
        "Both lists are covered with the search terms stated.",
      ],
      pass: 2,
      confidence: 0.8,
    });
  });

  it("§2.1 a fixture imported under another folder name is refused", () => {
    const result = parseProcess(read("fixtures", "expense-approval"), { folderName: "expenses" });
    expect(result).toEqual({
      ok: false,
      issues: [
        { line: 2, col: 7, message: 'name: folder name "expenses" differs from name "expense-approval"' },
      ],
    });
  });
});

describe("§6 rule 5 a parsed version does not change", () => {
  it("§6 rule 5 changing the returned steps or inputs leaves the hashed frontmatter alone", () => {
    const p = load("fixtures", "expense-approval");
    const before = structuredClone(p.frontmatter);
    (p.inputs as Record<string, unknown>).extra = "string";
    const step = p.steps[0];
    if (step?.kind === "agent" && step.output) (step.output as Record<string, unknown>).extra = "string";
    expect(p.frontmatter).toEqual(before);
  });
});
