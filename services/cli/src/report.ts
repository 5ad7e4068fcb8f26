// `baton report checks`: the check agreement report over the admin API (issue #14).
import type { CheckReport, DecisionCounts } from "@baton/protocol";
import { adminCall } from "./admin-api.ts";

/**
 * `--since` as the admin API takes it: an RFC 3339 datetime as given, or a date `YYYY-MM-DD` as its
 * first instant in UTC. Null when it is neither.
 */
export function sinceInstant(text: string): string | null {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const instant = `${text}T00:00:00Z`;
    return Number.isNaN(Date.parse(instant)) ? null : instant;
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text)) {
    return Number.isNaN(Date.parse(text)) ? null : text;
  }
  return null;
}

/**
 * `GET /api/processes/:name/check-report` as an operator (`bearer`) at `baseUrl` (docs/check-report.md);
 * throws the admin API's `ApiError`.
 */
export function fetchCheckReport(
  target: { baseUrl: string; bearer: string },
  name: string,
  since: string | null,
): Promise<CheckReport> {
  const query = since === null ? "" : `?since=${encodeURIComponent(since)}`;
  return adminCall<CheckReport>(
    { baseUrl: target.baseUrl, token: target.bearer },
    { method: "GET", path: `/api/processes/${encodeURIComponent(name)}/check-report${query}` },
  );
}

const percent = (rate: number | null) => (rate === null ? "n/a" : `${Math.round(rate * 1000) / 10}%`);
const row = (label: string, c: DecisionCounts, note = "") =>
  `    ${label.padEnd(8)} ${String(c.approved).padStart(8)} ${String(c.rejected).padStart(8)} ${String(c.undecided).padStart(9)}${note}`;

/** The report as text: per checked step the counts, the agreement rate, each question, and the runs where they disagreed. */
export function formatCheckReport(report: CheckReport): string {
  const lines = [
    `${report.process}: ${report.runs} live run${report.runs === 1 ? "" : "s"} read${report.since ? ` (verdicts since ${report.since})` : ""}`,
  ];
  if (report.steps.length === 0) lines.push("no recorded check verdicts");
  for (const step of report.steps) {
    lines.push(
      "",
      `step ${step.stepId}: ${step.verdicts} verdict${step.verdicts === 1 ? "" : "s"}, ${step.decided} followed by a decision; agreement ${percent(step.agreement)} (${step.agree} agree, ${step.disagree} disagree)`,
      `    ${"verdict".padEnd(8)} ${"approved".padStart(8)} ${"rejected".padStart(8)} ${"undecided".padStart(9)}`,
      row("pass", step.byVerdict.pass),
      row("fail", step.byVerdict.fail),
      row("unsure", step.byVerdict.unsure, "  (counted apart)"),
      row("error", step.byVerdict.error, "  (counted apart)"),
    );
    for (const q of step.questions) {
      const r = q.results;
      lines.push(
        `  question (${q.kind}) ${q.ask}`,
        `    agreement ${percent(q.agreement)} (${q.agree} agree, ${q.disagree} disagree); results approved/rejected/undecided: pass ${r.pass.approved}/${r.pass.rejected}/${r.pass.undecided}, fail ${r.fail.approved}/${r.fail.rejected}/${r.fail.undecided}, unsure ${r.unsure.approved}/${r.unsure.rejected}/${r.unsure.undecided}`,
      );
    }
    if (step.disagreements.length > 0) lines.push("  disagreements:");
    for (const d of step.disagreements) {
      lines.push(
        `    ${d.runId}: ${d.verdict} then ${d.decision} on ${d.decidedOn} by ${d.decidedBy} (checked ${d.checkedAt}, decided ${d.decidedAt})`,
      );
    }
  }
  return lines.join("\n");
}
