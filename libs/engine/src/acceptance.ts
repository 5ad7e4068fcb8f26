import { type AgentStep, checkValues, type Route, stepNext, type TaskStep } from "@baton/process";
import type { Completion, EvidenceItem, EvidenceItemArg, FileCheck } from "@baton/protocol";
import type { PublishedProcess } from "./run.ts";

/** A submission (agent `submit`) or a person's `completed` decision, as acceptance sees it. */
export interface Submission {
  output: Record<string, unknown> | undefined;
  evidence: EvidenceItemArg[] | undefined;
  summary: string | undefined;
  next: string | undefined;
  reason: string | undefined;
}

/** The accepted parts of a submission, ready to record. */
export interface Accepted {
  completion: Omit<Completion, "by" | "at">;
  /** The route chosen from a list `next`, else undefined (the step's own `next` applies). */
  chosen: string | undefined;
}

/** The routes of a step whose `next` is a list, else null. */
export function routesOf(def: PublishedProcess, step: AgentStep | TaskStep): Route[] | null {
  const next = stepNext(def.process, step.id);
  return Array.isArray(next) ? next : null;
}

/**
 * Acceptance (§6 rule 3, tools.md submit): every issue at once, in a stable order — summary, output,
 * evidence, next/reason. `summaryRequired` is true for agents (§3.3: "required from agents and
 * optional from people"). The run-data cap is checked by the caller on the data after recording.
 */
export function accept(
  def: PublishedProcess,
  step: AgentStep | TaskStep,
  sub: Submission,
  files: ReadonlyMap<string, FileCheck>,
  summaryRequired: boolean,
): { ok: true; accepted: Accepted } | { ok: false; issues: string[] } {
  const issues: string[] = [];
  const summary = sub.summary;
  if (summaryRequired && (summary === undefined || summary.trim() === "")) issues.push("summary: missing");
  else if (summary !== undefined && summary.trim() === "" && !summaryRequired) {
    issues.push("summary: blank; leave it out or say what was done");
  }

  const output = sub.output ?? {};
  issues.push(...checkValues(step.output ?? {}, output, "output"));

  const evidence: EvidenceItem[] = [];
  for (const item of sub.evidence ?? []) {
    if (item.kind === "link") {
      evidence.push({ kind: "link", ref: item.ref });
      continue;
    }
    const check: FileCheck = files.get(item.ref) ?? { status: "not_found" };
    switch (check.status) {
      case "not_found":
        // tools.md submit: "evidence f_000: not found", for another organization's file too, so
        // nothing of it is disclosed.
        issues.push(`evidence ${item.ref}: not found`);
        break;
      case "mismatch":
        issues.push(`evidence ${item.ref}: stored bytes no longer match the SHA-256 recorded at upload`);
        break;
      case "missing":
        issues.push(
          `evidence ${item.ref}: the stored bytes are gone; upload the file again and cite the new id`,
        );
        break;
      case "ok":
        evidence.push({ kind: "file", ref: item.ref, sha256: check.sha256 });
        break;
      default: {
        const unreachable: never = check;
        throw new Error(`unknown file check ${JSON.stringify(unreachable)}`);
      }
    }
  }
  for (const kind of step.evidence ?? []) {
    // §5: a required kind is met by at least one item of that kind, verified (§6 rule 3: "attached and
    // verified"); a file that cannot be verified does not meet it, and a link never stands in for one.
    if (!evidence.some((e) => e.kind === kind)) issues.push(`evidence: ${kind} required`);
  }

  const routes = routesOf(def, step);
  let chosen: string | undefined;
  if (routes) {
    const names = routes.map((r) => r.to).join(", ");
    if (sub.next === undefined) issues.push(`next: required, one of ${names}`);
    else if (!routes.some((r) => r.to === sub.next))
      issues.push(`next: "${sub.next}" is not one of ${names}`);
    else chosen = sub.next;
    if (sub.reason === undefined || sub.reason.trim() === "") issues.push("reason: required");
  } else {
    // §3.2: supplying them on a step whose next is not a list is a not_accepted issue.
    if (sub.next !== undefined) issues.push("next: not accepted; this step's next is not a list");
    if (sub.reason !== undefined) issues.push("reason: not accepted; this step's next is not a list");
  }

  if (issues.length > 0) return { ok: false, issues };
  const completion: Omit<Completion, "by" | "at"> = { output, evidence };
  if (summary !== undefined) completion.summary = summary;
  if (chosen !== undefined) {
    completion.next = chosen;
    completion.reason = sub.reason as string;
  }
  return { ok: true, accepted: { completion, chosen } };
}
