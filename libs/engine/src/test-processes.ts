/**
 * Processes the engine's unit tests run (not exported from the package). Most restate a conformance
 * fixture or the specification's own example in the smallest form that keeps the behaviour under
 * test; each names where it comes from. Roles are bound to a group of the same name.
 */

import { published } from "./test-support.ts";

/** The specification's §2 example, `supplier-onboarding`. */
export const SUPPLIER = published("supplier-onboarding", [
  "inputs:",
  "  vendorName: string",
  "  amount: { type: number, description: Expected annual spend in USD }",
  "steps:",
  "  - id: check_vendor",
  "    agent: Check the vendor against the OFAC and EU sanctions lists.",
  "    output:",
  "      cleared: boolean",
  "      summary: string",
  "    evidence: [file]",
  "    next:",
  "      - { to: approve, when: Vendor is cleared on both lists }",
  "      - { to: decline, when: Any sanctions hit }",
  "  - id: approve",
  "    person: finance-approver",
  "    approve: Approve only when the vendor is cleared and the spend is justified.",
  "    due: 2d",
  "    on_reject: check_vendor",
  "    next: done",
  "  - id: decline",
  "    finish: declined",
  "  - id: done",
  "    finish: onboarded",
]);

/** `employee-onboarding` (conformance fixture): three person tasks, an agent, an approval rewinding to the second task. */
export const ONBOARDING = published("employee-onboarding", [
  "inputs:",
  "  employeeId: string",
  "  hiringManager: person",
  "steps:",
  "  - id: hr_setup",
  "    person: hr-operations",
  "    task: Confirm the HR record.",
  "    output: { hrisRecord: string }",
  "    evidence: [link]",
  "    due: 2d",
  "  - id: access_plan",
  "    person: inputs.hiringManager",
  "    task: Specify the access needed.",
  "    output:",
  "      accessRequests: { type: list, items: string }",
  "      buddy: person",
  "    due: 2d",
  "  - id: it_setup",
  "    person: it-operations",
  "    task: Provision accounts.",
  "    output: { assetTag: string }",
  "    evidence: [link]",
  "  - id: welcome",
  "    agent: Create the first-week checklist.",
  "    output: { checklist: string }",
  "  - id: confirm_ready",
  "    person: inputs.hiringManager",
  "    approve: Confirm everything is arranged.",
  "    due: 1d",
  "    on_reject: access_plan",
  "  - id: done",
  "    finish: ready",
]);

/** `contract-review` (conformance fixture): a task by a person path, two approvals without a list next. */
export const CONTRACT = published("contract-review", [
  "inputs:",
  "  contractId: string",
  "  owner: person",
  "steps:",
  "  - id: prepare",
  "    person: inputs.owner",
  "    task: Prepare an immutable revision.",
  "    output: { revision: string, summary: string }",
  "    evidence: [file]",
  "  - id: legal_review",
  "    person: legal-reviewer",
  "    approve: Approve the legal terms.",
  "    on_reject: prepare",
  "    due: 3d",
  "  - id: finance_review",
  "    person: finance-reviewer",
  "    approve: Approve pricing and terms.",
  "    on_reject: prepare",
  "    due: 2d",
  "  - id: sign",
  "    person: authorized-signatory",
  "    task: Sign the approved revision.",
  "    output: { signedRevision: string }",
  "    evidence: [link]",
  "  - id: done",
  "    finish: signed",
]);

/** `support-escalation` (conformance fixture): a route list that can skip the step a rejection returns to. */
export const SUPPORT = published("support-escalation", [
  "inputs:",
  "  ticketId: string",
  "steps:",
  "  - id: diagnose",
  "    agent: Diagnose the ticket.",
  "    output: { diagnosis: string }",
  "    next: [confirm, tier1_handoff]",
  "  - id: tier1_handoff",
  "    person: tier1-lead",
  "    task: Check reproduction steps.",
  "    output:",
  "      severity: { type: string, one_of: [low, high, critical] }",
  "    due: 4h",
  "  - id: engineering",
  "    person: engineering-oncall",
  "    task: Own the fix.",
  "    output: { resolution: string }",
  "  - id: confirm",
  "    person: tier1-lead",
  "    approve: Confirm the problem is resolved.",
  "    on_reject: tier1_handoff",
  "  - id: close_ticket",
  "    agent: Close the ticket.",
  "    output: { ticket: string }",
  "    evidence: [link]",
  "    due: 1d",
  "  - id: done",
  "    finish: resolved",
]);

/** `expense-reimbursement` (conformance fixture): `initiator` on the first step, a person path later. */
export const EXPENSE = published("expense-reimbursement", [
  "inputs:",
  "  claimId: string",
  "  manager: person",
  "steps:",
  "  - id: receipts",
  "    person: initiator",
  "    task: Attach receipts.",
  "    output: { totalUsd: number }",
  "  - id: check",
  "    agent: Check the receipts.",
  "  - id: manager_review",
  "    person: inputs.manager",
  "    approve: Approve the checked amount.",
  "    on_reject: receipts",
  "  - id: done",
  "    finish: reimbursed",
]);

/** An agent first, `initiator` only on a later step (checklist R2-extra a, R3-3e). */
export const LATER_INITIATOR = published("later-initiator", [
  "steps:",
  "  - id: draft",
  "    agent: Draft it.",
  "  - id: sign_off",
  "    person: initiator",
  "    approve: Sign it off.",
  "  - id: done",
  "    finish: done",
]);

/** Person paths that may resolve to nothing: an optional input and an optional step output (§3.4, §3.5). */
export const PATHS = published("person-paths", [
  "inputs:",
  "  reviewer: { type: person, optional: true }",
  "steps:",
  "  - id: pick",
  "    agent: Pick an approver, or leave it out.",
  "    output:",
  "      approver: { type: person, optional: true }",
  "  - id: first_review",
  "    person: steps.pick.output.approver",
  "    approve: Review it.",
  "  - id: second_review",
  "    person: inputs.reviewer",
  "    approve: Review it again.",
  "  - id: done",
  "    finish: done",
]);

/** Every server step kind: `wait`, `wait_until`, `wait_for` with a timeout (§2.2, §3.6). */
export const WAITS = published("waits", [
  "inputs:",
  "  startAt: { type: datetime, optional: true }",
  "steps:",
  "  - id: prepare",
  "    agent: Prepare.",
  "  - id: cool_off",
  "    wait: 1h",
  "  - id: start_time",
  "    wait_until: inputs.startAt",
  "  - id: proof",
  "    wait_for: proof_received",
  "    timeout: 3d",
  "    on_timeout: chase",
  "  - id: review",
  "    person: reviewer",
  "    approve: Review the proof.",
  "    on_reject: prepare",
  "  - id: done",
  "    finish: reviewed",
  "  - id: chase",
  "    person: reviewer",
  "    task: Chase the missing proof.",
  "    next: done",
]);

/** Checklist R3-3c `event-review`: agent `prepare`, `wait_for: proof_received`, approval, finish. */
export const EVENT_REVIEW = published("event-review", [
  "steps:",
  "  - id: prepare",
  "    agent: Prepare the proof request.",
  "  - id: proof",
  "    wait_for: proof_received",
  "  - id: review",
  "    person: reviewer",
  "    approve: Review the proof.",
  "  - id: done",
  "    finish: reviewed",
]);

/** An agent step with `due` and an approval rewinding to it: `due` and handoff across attempts (§2.2, §3.3). */
export const DRAFTING = published("drafting", [
  "steps:",
  "  - id: draft",
  "    agent: Draft it. Address the editor's note on a revision.",
  "    output: { revision: string }",
  "    due: 4h",
  "  - id: editor_review",
  "    person: editor",
  "    approve: Approve the draft.",
  "    on_reject: draft",
  "  - id: done",
  "    finish: published",
]);

/**
 * parallel.md §1–§3 with agents: three branches from the first step — an agent with `due`, an agent
 * whose work an approval inside the branch can send back, and a `wait_for` that joins on its event or
 * its time-out — then an agent step and an approval that rejects `to` the parallel step (or a step
 * before it).
 */
export function parallelAgents(onReject: "split" | "brief" = "split") {
  return published(`parallel-agents-${onReject}`, [
    "steps:",
    "  - id: brief",
    "    agent: Write the brief.",
    "    output: { brief: string }",
    "  - id: split",
    "    parallel: [research, draft, legal]",
    "    next: merge",
    "  - id: research",
    "    agent: Research the topic.",
    "    output: { findings: string }",
    "    due: 2h",
    "    next: join",
    "  - id: draft",
    "    agent: Draft the text.",
    "    output: { text: string }",
    "    due: 4h",
    "    next: draft_review",
    "  - id: draft_review",
    "    person: editor",
    "    approve: Approve the draft.",
    "    on_reject: draft",
    "    next: join",
    "  - id: legal",
    "    wait_for: legal_cleared",
    "    timeout: 1d",
    "    on_timeout: join",
    "    next: join",
    "  - id: merge",
    "    agent: Merge the results.",
    "  - id: final",
    "    person: editor",
    "    approve: Approve the merged result.",
    `    on_reject: ${onReject}`,
    "  - id: done",
    "    finish: published",
  ]);
}

/** Checklist R3-1c variant: `major-incident` with `communications` as an agent step. */
export const INCIDENT_AGENT_COMMS = published("major-incident-agent-comms", [
  "inputs:",
  "  incidentId: string",
  "  commander: person",
  "steps:",
  "  - id: activate",
  "    agent: Open the incident bridge and page the three leads. Record the bridge reference.",
  "    output: { bridge: string }",
  "  - id: respond",
  "    parallel: [operations, security, communications]",
  "    next: close_review",
  "  - id: operations",
  "    person: operations-lead",
  "    task: Restore service. Attach the recovery evidence.",
  "    output: { recoverySummary: string }",
  "    evidence: [link]",
  "    due: 1h",
  "    next: join",
  "  - id: security",
  "    person: security-lead",
  "    task: Contain the security impact and record remaining exposure.",
  "    output: { containmentSummary: string }",
  "    evidence: [link]",
  "    due: 1h",
  "    next: join",
  "  - id: communications",
  "    agent: Publish the customer notice and keep it updated.",
  "    output: { communicationsSummary: string }",
  "    evidence: [link]",
  "    due: 1h",
  "    next: join",
  "  - id: close_review",
  "    person: inputs.commander",
  "    approve: Confirm all three leads finished with evidence.",
  "    on_reject: respond",
  "  - id: done",
  "    finish: stabilized",
]);

/** parallel.md §3: branches that join the moment they are forked (a `wait_until` already past). */
export const INSTANT_BRANCHES = published("instant-branches", [
  "inputs:",
  "  past: datetime",
  "steps:",
  "  - id: fork",
  "    parallel: [first, second]",
  "    next: after",
  "  - id: first",
  "    wait_until: inputs.past",
  "    next: join",
  "  - id: second",
  "    wait_until: inputs.past",
  "    next: join",
  "  - id: after",
  "    agent: Carry on.",
  "  - id: done",
  "    finish: done",
]);

/**
 * check.md §2–§3 on a person's task and on an agent step: a short-form check (one yes/no question,
 * the server's default thresholds), optionally advisory, and a task whose check a person's `completed`
 * runs. `due` shows that an escalation and a `returned` keep the attempt's clock.
 */
export function checkedWork(advisory = false) {
  return published(`checked-work${advisory ? "-advisory" : ""}`, [
    "steps:",
    "  - id: summarize",
    "    agent: Summarize the incident.",
    "    output: { summary: string }",
    "    check: The summary names the root cause.",
    ...(advisory ? ["    advisory: true"] : []),
    "  - id: review",
    "    person: reviewer",
    "    task: Review the summary and record the action items.",
    "    output: { actions: { type: list, items: string } }",
    "    due: 1d",
    "    check:",
    "      - ask: Every action item has an owner.",
    "        pass: 0.8",
    "        fail: 0.4",
    ...(advisory ? ["    advisory: true"] : []),
    "  - id: done",
    "    finish: reviewed",
  ]);
}

/** parallel.md §3 with check.md §3: a checked agent step in one branch, a plain agent step in the other. */
export const PARALLEL_CHECKED = published("parallel-checked", [
  "steps:",
  "  - id: fork",
  "    parallel: [screen, notes]",
  "    next: done",
  "  - id: screen",
  "    agent: Screen the vendor.",
  "    output: { cleared: boolean }",
  "    check: The screening is sound.",
  "    next: join",
  "  - id: notes",
  "    agent: Take notes.",
  "    output: { notes: string }",
  "    next: join",
  "  - id: done",
  "    finish: done",
]);
