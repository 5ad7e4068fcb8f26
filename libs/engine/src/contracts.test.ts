import { describe, expect, it } from "vitest";
import { DRAFTING, SUPPLIER, SUPPORT } from "./test-processes.ts";
import { agent, CONFIG, MINUTE, operator, person, Sim, T0 } from "./test-support.ts";

/**
 * The tool contracts for one run (tools.md): each tool's results and errors in the documented order
 * of checks, with `run_ended` first on every write (§3.5). Where two checks would both refuse a
 * call, a test sets up exactly that and pins which one answers.
 */

const a1 = agent("a_one");
const a2 = agent("a_two");
const finance = person("fin@example.com", ["finance-approver"]);
const outsider = person("out@example.com", ["sales"]);
const editor = person("ed@example.com", ["editor"]);

function supplier(): Sim {
  const sim = Sim.start(SUPPLIER, person("mira@example.com"), { vendorName: "Acme", amount: 48000 });
  sim.files.set("f_ok", { status: "ok", sha256: "4f1c" });
  sim.files.set("f_changed", { status: "mismatch" });
  sim.files.set("f_removed", { status: "missing" });
  return sim;
}

const GOOD = {
  output: { cleared: true, summary: "No matches." },
  evidence: [{ kind: "file" as const, ref: "f_ok" }],
  summary: "Searched both lists.",
  next: "approve",
  reason: "Cleared.",
};

describe("claim (tools.md claim)", () => {
  it("grants a lease of describe.leaseSeconds and marks the step claimed", () => {
    const sim = supplier();
    const value = sim.ok(a1, { type: "claim", stepId: "check_vendor" });
    expect(value).toEqual({
      kind: "claim",
      claimId: expect.any(String),
      expiresAt: T0 + CONFIG.leaseMs,
      stepId: "check_vendor",
    });
    expect(sim.states().check_vendor).toBe("claimed");
  });

  it("claimed_by_you for the holder, claimed_by_other for anyone else, not_ready otherwise", () => {
    const sim = supplier();
    sim.claim(a1, "check_vendor");
    expect(sim.refused(a1, { type: "claim", stepId: "check_vendor" })).toEqual({
      code: "conflict",
      issues: ["claimed_by_you"],
      changed: false,
    });
    expect(sim.refused(a2, { type: "claim", stepId: "check_vendor" })).toMatchObject({
      code: "conflict",
      issues: ["claimed_by_other"],
    });
    const support = Sim.start(SUPPORT, a1, { ticketId: "T-1" });
    // close_ticket is not reached yet; an escalated step is waiting on a person: both not_ready.
    expect(support.refused(a1, { type: "claim", stepId: "close_ticket" })).toMatchObject({
      code: "conflict",
      issues: ["not_ready"],
    });
    const claimId = support.claim(a1, "diagnose");
    support.ok(a1, { type: "escalate", claimId, note: "Need logs." });
    expect(support.refused(a2, { type: "claim", stepId: "diagnose" })).toMatchObject({
      issues: ["not_ready"],
    });
  });

  it("forbidden for a person (tools.md: agents claim), before not_found; forbidden for a non-agent step", () => {
    const sim = supplier();
    expect(sim.refused(finance, { type: "claim", stepId: "no_such_step" }).code).toBe("forbidden");
    expect(sim.refused(a1, { type: "claim", stepId: "no_such_step" }).code).toBe("not_found");
    expect(sim.refused(a1, { type: "claim", stepId: "approve" }).code).toBe("forbidden");
    expect(sim.refused(a1, { type: "claim", stepId: "done" }).code).toBe("forbidden");
  });

  it("the step is claimable again the moment a lease ends (§3.3, #41)", () => {
    const sim = supplier();
    sim.claim(a1, "check_vendor");
    sim.advance(CONFIG.leaseMs - 1);
    expect(sim.refused(a2, { type: "claim", stepId: "check_vendor" }).issues).toEqual(["claimed_by_other"]);
    sim.advance(1);
    expect(sim.states().check_vendor).toBe("ready");
    expect(sim.claim(a2, "check_vendor")).toBeTruthy();
  });
});

describe("renew (tools.md renew)", () => {
  it("returns a new claim and expiry of now + lease; the old token is stale at once (#42, #43)", () => {
    const sim = supplier();
    const first = sim.claim(a1, "check_vendor");
    sim.advance(5 * MINUTE);
    const renewed = sim.ok(a1, { type: "renew", claimId: first, progress: "EU list done." });
    expect(renewed).toEqual({
      kind: "renew",
      claimId: expect.any(String),
      expiresAt: sim.now + CONFIG.leaseMs,
    });
    if (renewed.kind !== "renew") return;
    expect(renewed.claimId).not.toBe(first);
    expect(sim.refused(a1, { type: "submit", claimId: first, ...GOOD }).code).toBe("stale");
    expect(sim.refused(a1, { type: "renew", claimId: first }).code).toBe("stale");
    expect(sim.run.steps.check_vendor?.progress).toBe("EU list done.");
    // The renewed lease outlives the first one.
    sim.advance(6 * MINUTE);
    expect(sim.ok(a1, { type: "submit", claimId: renewed.claimId, ...GOOD })).toEqual({ kind: "view" });
  });

  it("stale after the lease ended; forbidden for another identity holding the token; run_ended first", () => {
    const sim = supplier();
    const claimId = sim.claim(a1, "check_vendor");
    expect(sim.refused(a2, { type: "renew", claimId }).code).toBe("forbidden");
    expect(sim.refused(finance, { type: "renew", claimId }).code).toBe("forbidden");
    sim.advance(CONFIG.leaseMs);
    expect(sim.refused(a1, { type: "renew", claimId }).code).toBe("stale");
    const other = supplier();
    const c = other.claim(a1, "check_vendor");
    other.ok(operator(), { type: "cancel", reason: "Stop." });
    expect(other.refused(a1, { type: "renew", claimId: c }).issues).toEqual(["run_ended"]);
  });
});

describe("submit (tools.md submit, §6 rule 3)", () => {
  it("not_accepted lists every issue at once and changes nothing: same run data, snapshot and claim", () => {
    const sim = supplier();
    const claimId = sim.claim(a1, "check_vendor");
    const before = structuredClone(sim.run);
    const refused = sim.refused(a1, {
      type: "submit",
      claimId,
      output: { cleared: "yes", extra: 1 },
      evidence: [{ kind: "link", ref: "https://lists.example.com" }],
      summary: "",
      next: "nowhere",
      reason: " ",
    });
    expect(refused.code).toBe("not_accepted");
    expect(refused.issues).toEqual([
      "summary: missing",
      "output.cleared: expected boolean",
      "output.summary: missing",
      "output.extra: not declared",
      "evidence: file required",
      'next: "nowhere" is not one of approve, decline',
      "reason: required",
    ]);
    expect(sim.run.data).toEqual(before.data);
    expect(sim.run.snapshot).toBe(before.snapshot);
    expect(sim.run.steps.check_vendor?.claim).toEqual(before.steps.check_vendor?.claim);
    expect(sim.ok(a1, { type: "submit", claimId, ...GOOD })).toEqual({ kind: "view" });
  });

  it("a list next requires next and a non-blank reason; a scalar next refuses both (§3.2, #26, #27)", () => {
    const sim = supplier();
    const claimId = sim.claim(a1, "check_vendor");
    const { next: _n, reason: _r, ...bare } = GOOD;
    expect(sim.refused(a1, { type: "submit", claimId, ...bare }).issues).toEqual([
      "next: required, one of approve, decline",
      "reason: required",
    ]);
    const draft = Sim.start(DRAFTING, editor);
    const c = draft.claim(a1, "draft");
    expect(
      draft.refused(a1, {
        type: "submit",
        claimId: c,
        output: { revision: "r1" },
        summary: "Drafted.",
        next: "editor_review",
        reason: "Done.",
      }).issues,
    ).toEqual([
      "next: not accepted; this step's next is not a list",
      "reason: not accepted; this step's next is not a list",
    ]);
  });

  it("[#87] file evidence must exist in the organization with its upload hash; a link never stands in (§5)", () => {
    const sim = supplier();
    const claimId = sim.claim(a1, "check_vendor");
    const issues = (evidence: { kind: "file" | "link"; ref: string }[]) =>
      sim.refused(a1, { type: "submit", claimId, ...GOOD, evidence }).issues;
    // A file that cannot be verified does not meet the requirement either (§6 rule 3: "attached and
    // verified"), so both issues are listed (tools.md submit lists both).
    expect(issues([{ kind: "file", ref: "f_000" }])).toEqual([
      "evidence f_000: not found",
      "evidence: file required",
    ]);
    expect(issues([{ kind: "file", ref: "https://example.com/report.pdf" }])).toEqual([
      "evidence https://example.com/report.pdf: not found",
      "evidence: file required",
    ]);
    expect(issues([{ kind: "file", ref: "f_changed" }])).toEqual([
      "evidence f_changed: stored bytes no longer match the SHA-256 recorded at upload",
      "evidence: file required",
    ]);
    expect(issues([{ kind: "file", ref: "f_removed" }])).toEqual([
      "evidence f_removed: the stored bytes are gone; upload the file again and cite the new id",
      "evidence: file required",
    ]);
    expect(issues([])).toEqual(["evidence: file required"]);
    // More items of any kind may be attached beside the required one (#86).
    sim.ok(a1, {
      type: "submit",
      claimId,
      ...GOOD,
      evidence: [
        { kind: "link", ref: "https://lists.example.com" },
        { kind: "file", ref: "f_ok" },
      ],
    });
    expect(sim.view().data.steps.check_vendor?.evidence).toEqual([
      { kind: "link", ref: "https://lists.example.com" },
      { kind: "file", ref: "f_ok", sha256: "4f1c" },
    ]);
  });

  it("stale for an ended or replaced lease; forbidden for another identity; run_ended before both", () => {
    const sim = supplier();
    const claimId = sim.claim(a1, "check_vendor");
    expect(sim.refused(a2, { type: "submit", claimId, ...GOOD }).code).toBe("forbidden");
    sim.advance(CONFIG.leaseMs);
    expect(sim.refused(a1, { type: "submit", claimId, ...GOOD }).code).toBe("stale");
    const next = sim.claim(a2, "check_vendor");
    expect(sim.refused(a1, { type: "submit", claimId, ...GOOD }).code).toBe("stale");
    sim.ok(a2, { type: "submit", claimId: next, ...GOOD });
    sim.ok(operator(), { type: "cancel", reason: "Stop." });
    expect(sim.refused(a1, { type: "submit", claimId, ...GOOD }).issues).toEqual(["run_ended"]);
  });
});

describe("escalate (tools.md escalate, §3.3)", () => {
  it("the step waits on the operator queue with the note; the token is invalid at once (#47)", () => {
    const sim = supplier();
    const claimId = sim.claim(a1, "check_vendor");
    sim.advance(MINUTE);
    sim.ok(a1, { type: "escalate", claimId, note: "The EU list is down." });
    const view = sim.view();
    expect(view.run.state).toBe("waiting");
    expect(sim.states().check_vendor).toBe("waiting");
    expect(view.workItems).toEqual([
      expect.objectContaining({
        stepId: "check_vendor",
        kind: "agent",
        assignedTo: { group: "operators" },
        escalation: { note: "The EU list is down.", by: "a_one", at: "2026-10-06T09:01:00.000Z" },
        output: { cleared: "boolean", summary: "string" },
        evidence: ["file"],
        next: [
          { to: "approve", when: "Vendor is cleared on both lists" },
          { to: "decline", when: "Any sanctions hit" },
        ],
      }),
    ]);
    expect(view.workItems[0]?.decide.decisions).toEqual(["returned", "completed", "failed"]);
    expect(sim.refused(a1, { type: "submit", claimId, ...GOOD }).code).toBe("stale");
    expect(sim.refused(a1, { type: "escalate", claimId, note: "again" }).code).toBe("stale");
    expect(sim.refused(a1, { type: "renew", claimId }).code).toBe("stale");
  });

  it("a blank note is invalid; the claim stands", () => {
    const sim = supplier();
    const claimId = sim.claim(a1, "check_vendor");
    expect(sim.refused(a1, { type: "escalate", claimId, note: "  " })).toMatchObject({
      code: "invalid",
      issues: ["note: required"],
    });
    expect(sim.states().check_vendor).toBe("claimed");
  });
});

describe("decide (tools.md decide): run_ended → already_decided → not_found → stale → forbidden → not_accepted", () => {
  function waiting(): { sim: Sim; itemId: string; snapshot: string } {
    const sim = supplier();
    sim.work(a1, "check_vendor", GOOD.output, {
      evidence: GOOD.evidence,
      next: GOOD.next,
      reason: GOOD.reason,
    });
    return { sim, itemId: sim.item("approve").id, snapshot: sim.run.snapshot };
  }
  const decide = (itemId: string, snapshot: string) =>
    ({ type: "decide", workItemId: itemId, snapshot, decision: "approved" }) as const;

  it("run_ended before already_decided (the decision that ended the run)", () => {
    const { sim, itemId, snapshot } = waiting();
    sim.ok(finance, decide(itemId, snapshot));
    expect(sim.refused(finance, decide(itemId, snapshot)).issues).toEqual(["run_ended"]);
  });

  it("already_decided before not_found and stale: a second group member learns the truth (§3.4)", () => {
    const { sim, itemId, snapshot } = waiting();
    sim.decide(finance, "approve", "rejected", { note: "Redo." });
    expect(sim.run.state).toBe("active");
    expect(sim.refused(person("fred@example.com", ["finance-approver"]), decide(itemId, snapshot))).toEqual({
      code: "conflict",
      issues: ["already_decided"],
      changed: false,
    });
    // Even an agent or an outsider with a stale snapshot hears already_decided: it is checked first.
    expect(sim.refused(a1, decide(itemId, "stale")).issues).toEqual(["already_decided"]);
  });

  it("not_found before stale: an item that never existed on this run", () => {
    const { sim } = waiting();
    expect(sim.refused(finance, decide("w_999", "stale")).code).toBe("not_found");
  });

  it("stale before forbidden: an agent deciding with a stale snapshot gets stale (tools.md order, pinned)", () => {
    const { sim, itemId } = waiting();
    expect(sim.refused(a1, decide(itemId, "0000")).code).toBe("stale");
    expect(sim.refused(outsider, decide(itemId, "0000")).code).toBe("stale");
  });

  it("forbidden for an agent identity and for a person outside the assignment, with a current snapshot (§6 rule 4)", () => {
    const { sim, itemId, snapshot } = waiting();
    expect(sim.refused(a1, decide(itemId, snapshot)).code).toBe("forbidden");
    expect(sim.refused(outsider, decide(itemId, snapshot)).code).toBe("forbidden");
    expect(sim.refused(operator(), decide(itemId, snapshot)).code).toBe("forbidden");
  });

  it("a decision the item does not accept is invalid; a task's completed is checked like a submission", () => {
    const { sim, itemId, snapshot } = waiting();
    expect(
      sim.refused(finance, { ...decide(itemId, snapshot), decision: "returned", note: "x" }),
    ).toMatchObject({
      code: "invalid",
      issues: ["decision: must be one of approved, rejected, failed"],
    });
    expect(
      sim.refused(finance, { ...decide(itemId, snapshot), decision: "completed", output: {} }).code,
    ).toBe("invalid");
    const support = Sim.start(SUPPORT, a1, { ticketId: "T-1" });
    support.work(a1, "diagnose", { diagnosis: "Unknown." }, { next: "tier1_handoff", reason: "Not fixed." });
    const lead = person("tia@example.com", ["tier1-lead"]);
    const refused = support.decide(lead, "tier1_handoff", "completed", {
      output: { severity: "urgent" },
      next: "engineering",
      reason: "x",
    });
    expect(refused.error).toMatchObject({
      code: "not_accepted",
      issues: [
        'output.severity: "urgent" is not one of low, high, critical',
        "next: not accepted; this step's next is not a list",
        "reason: not accepted; this step's next is not a list",
      ],
    });
    expect(support.states().tier1_handoff).toBe("waiting");
  });

  it("the decision table's combinations are invalid after forbidden, every issue at once — and run_ended or already_decided come first (tools.md decide, §3.5)", () => {
    const { sim, itemId, snapshot } = waiting();
    expect(
      sim.refused(finance, { ...decide(itemId, snapshot), decision: "rejected", next: "done", summary: "s" }),
    ).toMatchObject({
      code: "invalid",
      issues: [
        'next: only with decision "completed", not "rejected"',
        'summary: only with decision "completed", not "rejected"',
        'note: required with decision "rejected"',
      ],
    });
    // An agent with a bad combination hears forbidden: the combination is checked after it.
    expect(sim.refused(a1, { ...decide(itemId, snapshot), decision: "failed" }).code).toBe("forbidden");
    // A decided item answers already_decided, not the missing note.
    sim.decide(finance, "approve", "rejected", { note: "Redo." });
    expect(sim.refused(finance, { ...decide(itemId, snapshot), decision: "rejected" }).issues).toEqual([
      "already_decided",
    ]);
    // An ended run answers run_ended, whatever the arguments (review finding).
    sim.ok(operator(), { type: "cancel", reason: "Stop." });
    expect(
      sim.refused(finance, { ...decide(itemId, snapshot), decision: "approved", next: "done" }).issues,
    ).toEqual(["run_ended"]);
  });

  it("the snapshot is the run data's at read time: a change to run data makes an older one stale (§3.4)", () => {
    const sim = Sim.start(SUPPORT, a1, { ticketId: "T-1" });
    const before = sim.run.snapshot;
    sim.claim(a1, "diagnose");
    expect(sim.run.snapshot).toBe(before); // claims are not run data
    const claimId = sim.run.steps.diagnose?.claim?.id as string;
    sim.ok(a1, {
      type: "submit",
      claimId,
      output: { diagnosis: "x" },
      summary: "x",
      next: "tier1_handoff",
      reason: "x",
    });
    expect(sim.run.snapshot).not.toBe(before);
    const lead = person("tia@example.com", ["tier1-lead"]);
    const item = sim.item("tier1_handoff");
    expect(
      sim.refused(lead, {
        type: "decide",
        workItemId: item.id,
        snapshot: before,
        decision: "failed",
        note: "x",
      }).code,
    ).toBe("stale");
  });
});

describe("cancel (tools.md cancel, §3.5)", () => {
  it("operators only: forbidden for an agent and for a person without the operator role", () => {
    const sim = supplier();
    expect(sim.refused(a1, { type: "cancel", reason: "x" }).code).toBe("forbidden");
    expect(sim.refused(finance, { type: "cancel", reason: "x" }).code).toBe("forbidden");
    // §3.5: an operator cancels "with a reason"; a blank one is no reason (review finding).
    expect(sim.refused(operator(), { type: "cancel", reason: "  " })).toMatchObject({
      code: "invalid",
      issues: ["reason: required"],
    });
    expect(sim.ok(operator(), { type: "cancel", reason: "Duplicate request." })).toEqual({ kind: "view" });
    expect(sim.view().run.ended).toEqual({
      by: "olga@example.com",
      at: "2026-10-06T09:00:00.000Z",
      note: "Duplicate request.",
    });
  });
});
