// A work item (§3.4): the step's instructions, the run data so far, and the decision.
import type { Decision, RunView, VersionDetail, WorkItem } from "@baton/protocol";
import type { ComponentChildren } from "preact";
import { useMemo, useState } from "preact/hooks";
import { type AttachedEvidence, EvidenceInput } from "../components/evidence-input.tsx";
import { errorId, FieldIssues, OutputForm } from "../components/output-form.tsx";
import { RunDataView } from "../components/run-data.tsx";
import { useCalls, useLoad } from "../context.ts";
import { controlsFor, type FormValue, type FormValues, issuesByTarget, outputOf } from "../form/model.ts";
import { humanize } from "../map/model.ts";
import { href } from "../router.ts";
import { ErrorBox, Loading, PageTitle, TestMark, Time } from "../ui.tsx";
import { assignee, Due, itemKind } from "./inbox.tsx";

/** The work item page: loads the run (get_run) and finds the item in its open work items. */
export function WorkItemPage({ runId, workItemId }: { runId: string; workItemId: string }) {
  const calls = useCalls();
  const [loaded, reload] = useLoad(() => calls.tool<RunView>("get_run", { runId }), `run:${runId}`);
  const [decided, setDecided] = useState<{ decision: Decision; view: RunView } | null>(null);
  return (
    <Loading loaded={loaded}>
      {(view) => {
        if (decided) return <Decided decided={decided} />;
        const item = view.workItems.find((w) => w.id === workItemId);
        if (!item) return <Gone view={view} />;
        return (
          <>
            <PageTitle text={`${itemKind(item)}: ${humanize(item.stepId)}`}>
              {itemKind(item)}: {humanize(item.stepId)}
            </PageTitle>
            <p class="meta">
              <span>
                {view.run.process} v{view.run.version}
              </span>
              <span>
                Run <a href={href("runs", view.run.id)}>{view.run.id}</a>
              </span>
              <span>Assigned to {assignee(item)}</span>
              <Due due={item.due} />
              <TestMark mode={item.mode ?? view.run.mode} />
            </p>
            {view.run.mode === "test" && (
              <p class="notice">This is a test run: nothing you decide here has effects outside Baton.</p>
            )}
            <Handoff item={item} />
            <section aria-labelledby="instructions-title">
              <h2 id="instructions-title">Instructions</h2>
              <p class="instructions">{item.text}</p>
            </section>
            <RunDataView data={view.data} />
            <details class="body">
              <summary>About this process</summary>
              <pre class="process-body">{view.body}</pre>
            </details>
            <DeclaredOrder view={view} stepId={item.stepId}>
              {(order) => (
                <DecisionForm
                  item={item}
                  order={order}
                  reload={reload}
                  onDecided={(decision, v) => setDecided({ decision, view: v })}
                />
              )}
            </DeclaredOrder>
          </>
        );
      }}
    </Loading>
  );
}

/**
 * The step's output fields in the order the file declares them (run data keeps no key order), from
 * the published version; the form waits for it, and falls back to the work item's order.
 */
function DeclaredOrder({
  view,
  stepId,
  children,
}: {
  view: RunView;
  stepId: string;
  children: (order: string[]) => ComponentChildren;
}) {
  const calls = useCalls();
  const { process, version } = view.run;
  const [loaded] = useLoad(
    () => calls.get<VersionDetail>(`/api/processes/${encodeURIComponent(process)}/versions/${version}`),
    `version:${process}:${version}`,
  );
  if (loaded.state === "loading") return <p role="status">Loading the form…</p>;
  const step = loaded.state === "ok" ? loaded.data.definition.steps.find((s) => s.id === stepId) : undefined;
  const output = step && (step.kind === "task" || step.kind === "agent") ? step.output : null;
  return <>{children(Object.keys(output ?? {}))}</>;
}

function Handoff({ item }: { item: WorkItem }) {
  const e = item.escalation;
  const h = item.handoff;
  if (!e && !h) return null;
  return (
    <section class="notice" aria-labelledby="handoff-title">
      <h2 id="handoff-title">{e ? "Escalated" : "From the previous attempt"}</h2>
      {e && (
        <p>
          {e.by} escalated this step (<Time at={e.at} />
          ): {e.note}
        </p>
      )}
      {h?.returned && (
        <p>
          {h.returned.by} returned it (<Time at={h.returned.at} />
          ): {h.returned.note}
        </p>
      )}
      {h?.progress && <p>Progress noted: {h.progress}</p>}
      {h?.issues && (
        <>
          <p>The last submission was not accepted:</p>
          <ul>
            {h.issues.map((i) => (
              <li key={i}>{i}</li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function Gone({ view }: { view: RunView }) {
  const ended = view.run.state === "ended" || view.run.state === "cancelled";
  return (
    <>
      <PageTitle text="No longer open">This work item is no longer open</PageTitle>
      <p>
        {ended
          ? `The run has ${view.run.state === "cancelled" ? "been cancelled" : `ended ${view.run.outcome ?? ""}`}.`
          : "It was decided, or the run moved on."}{" "}
        See <a href={href("runs", view.run.id)}>the run</a> or go back to your <a href={href()}>inbox</a>.
      </p>
    </>
  );
}

function Decided({ decided }: { decided: { decision: Decision; view: RunView } }) {
  const run = decided.view.run;
  return (
    <>
      <PageTitle text="Decided">Decided: {decided.decision}</PageTitle>
      <p role="status">
        Your decision was recorded. The run is now <strong>{run.state}</strong>
        {run.outcome ? (
          <>
            {" "}
            with the outcome <strong>{run.outcome}</strong>
          </>
        ) : null}
        .
      </p>
      <p>
        See <a href={href("runs", run.id)}>the run</a> or go back to your <a href={href()}>inbox</a>.
      </p>
    </>
  );
}

/** What the person has typed, kept across refusals and reloads. */
interface Draft {
  values: FormValues;
  evidence: AttachedEvidence[];
  next: string;
  reason: string;
  summary: string;
  note: string;
}

/**
 * The decision (§3.4, tools.md decide) for what this item accepts (`decide.decisions`): Approve and
 * Reject on an approval; the output form, evidence, the route with its reason and a summary on a
 * task; Return, Complete and Fail on an escalated agent step; Fail on any. Each sends `decide` with a
 * fresh `requestId` and the item's `snapshot`. A refusal shows its issues by the fields they name
 * (`not_accepted`, `invalid`) and keeps everything typed; `stale` reloads the run so the person sees
 * what changed, then they send again.
 */
function DecisionForm({
  item,
  order,
  reload,
  onDecided,
}: {
  item: WorkItem;
  /** Output field names in declared order. */
  order: string[];
  reload: () => Promise<void>;
  onDecided: (decision: Decision, view: RunView) => void;
}) {
  const calls = useCalls();
  const controls = useMemo(() => {
    const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
    return controlsFor(item.output).sort((a, b) => rank(a.name) - rank(b.name));
  }, [item.output, order]);
  const [draft, setDraft] = useState<Draft>({
    values: Object.fromEntries(controls.map((c) => [c.name, c.widget === "list" ? [] : ""])),
    evidence: [],
    next: "",
    reason: "",
    summary: "",
    note: "",
  });
  const [busy, setBusy] = useState<Decision | null>(null);
  const [refusal, setRefusal] = useState<{ title: string; message: string; issues: string[] } | null>(null);
  const issues = useMemo(() => issuesByTarget(refusal?.issues ?? []), [refusal]);
  const allowed = new Set(item.decide.decisions);
  const update = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));

  async function decide(decision: Decision) {
    const args: Record<string, unknown> = {
      ...item.decide.arguments,
      requestId: crypto.randomUUID(),
      decision,
    };
    if (decision === "completed") {
      if (controls.length > 0) args.output = outputOf(controls, draft.values);
      if (draft.evidence.length > 0) args.evidence = draft.evidence.map(({ kind, ref }) => ({ kind, ref }));
      if (draft.summary.trim() !== "") args.summary = draft.summary;
      if (item.next) {
        if (draft.next !== "") args.next = draft.next;
        if (draft.reason.trim() !== "") args.reason = draft.reason;
      }
    } else if (draft.note.trim() !== "" || decision !== "approved") {
      // A rejection, return or failure without a note is sent as it is: the server says `note: required`.
      args.note = draft.note;
    }
    setBusy(decision);
    setRefusal(null);
    const result = await calls.tool<RunView>("decide", args);
    setBusy(null);
    if (result.ok) {
      onDecided(decision, result.data);
      return;
    }
    const { code, message } = result.error;
    const found = result.error.issues ?? [];
    if (code === "stale") {
      await reload();
      setRefusal({
        title: "The run changed since you opened this item.",
        message:
          "Its latest state is shown above: check it, then send your decision again. What you typed is kept.",
        issues: [],
      });
      return;
    }
    const title =
      code === "not_accepted"
        ? "Not accepted."
        : code === "invalid"
          ? "Something is missing or wrong."
          : code === "conflict"
            ? "Already decided or ended."
            : code === "forbidden"
              ? "Not allowed."
              : "Not sent.";
    setRefusal({ title, message, issues: found });
  }

  const noteIssues = issues.get("note");
  const general = refusal ? [...(issues.get("") ?? [])] : [];
  const completing = allowed.has("completed");
  const noteLabel =
    item.kind === "approve"
      ? "Note (required to reject)"
      : item.escalation
        ? "Note (required to return or fail)"
        : "Note (required to fail the run)";
  const noteField = (
    <div class="field">
      <label for="decision-note">{noteLabel}</label>
      <textarea
        id="decision-note"
        rows={3}
        value={draft.note}
        aria-describedby={noteIssues ? errorId("note") : undefined}
        aria-invalid={noteIssues ? true : undefined}
        onInput={(e) => update({ note: (e.target as HTMLTextAreaElement).value })}
      />
      <FieldIssues target="note" issues={noteIssues} />
    </div>
  );
  const button = (decision: Decision, text: string, tone = "") => (
    <button type="button" class={tone} disabled={busy !== null} onClick={() => void decide(decision)}>
      {busy === decision ? "Sending…" : text}
    </button>
  );

  return (
    <section class="decision" aria-labelledby="decision-title">
      <h2 id="decision-title">Your decision</h2>
      {refusal && <ErrorBox title={refusal.title} message={refusal.message} issues={general} />}
      <form onSubmit={(e) => e.preventDefault()} noValidate>
        {item.kind === "approve" ? (
          <>
            {noteField}
            <div class="actions">
              {allowed.has("approved") && button("approved", "Approve", "primary")}
              {allowed.has("rejected") && button("rejected", "Reject", "danger")}
            </div>
          </>
        ) : (
          <>
            {completing && (
              <fieldset class="group">
                <legend>{item.escalation ? "Complete it in the agent's place" : "Complete the task"}</legend>
                <OutputForm
                  controls={controls}
                  values={draft.values}
                  issues={issues}
                  onChange={(name: string, value: FormValue) =>
                    update({ values: { ...draft.values, [name]: value } })
                  }
                />
                {(item.evidence || issues.has("evidence")) && (
                  <EvidenceInput
                    items={draft.evidence}
                    required={item.evidence ?? []}
                    issues={issues.get("evidence")}
                    onChange={(evidence) => update({ evidence })}
                  />
                )}
                {item.next && <RouteChoice item={item} draft={draft} issues={issues} update={update} />}
                <div class="field">
                  <label for="decision-summary">Summary (optional)</label>
                  <p class="hint" id="summary-hint">
                    What you did and found, in your words.
                  </p>
                  <textarea
                    id="decision-summary"
                    rows={3}
                    value={draft.summary}
                    aria-describedby={
                      issues.has("summary") ? `summary-hint ${errorId("summary")}` : "summary-hint"
                    }
                    onInput={(e) => update({ summary: (e.target as HTMLTextAreaElement).value })}
                  />
                  <FieldIssues target="summary" issues={issues.get("summary")} />
                </div>
                <div class="actions">{button("completed", "Complete", "primary")}</div>
              </fieldset>
            )}
            {item.escalation ? (
              <fieldset class="group">
                <legend>Return it or fail the run</legend>
                {noteField}
                <div class="actions">
                  {allowed.has("returned") && button("returned", "Return")}
                  {allowed.has("failed") && button("failed", "Fail", "danger")}
                </div>
              </fieldset>
            ) : (
              allowed.has("failed") && (
                <details class="group">
                  <summary>Fail the run instead</summary>
                  {noteField}
                  <div class="actions">{button("failed", "Fail the run", "danger")}</div>
                </details>
              )
            )}
          </>
        )}
        {item.kind === "approve" && allowed.has("failed") && (
          <details class="group">
            <summary>Fail the run instead</summary>
            <p class="hint">Ends the run as failed, with the note above.</p>
            <div class="actions">{button("failed", "Fail the run", "danger")}</div>
          </details>
        )}
      </form>
    </section>
  );
}

function RouteChoice({
  item,
  draft,
  issues,
  update,
}: {
  item: WorkItem;
  draft: Draft;
  issues: Map<string, string[]>;
  update: (patch: Partial<Draft>) => void;
}) {
  const nextIssues = issues.get("next");
  const reasonIssues = issues.get("reason");
  return (
    <>
      <fieldset
        class="field"
        aria-describedby={nextIssues ? errorId("next") : undefined}
        aria-invalid={nextIssues ? true : undefined}
      >
        <legend>Where next</legend>
        <div class="choices vertical">
          {(item.next ?? []).map((route) => (
            <label key={route.to}>
              <input
                type="radio"
                name="decision-next"
                value={route.to}
                checked={draft.next === route.to}
                onChange={() => update({ next: route.to })}
              />{" "}
              {route.when ? (
                <>
                  {route.when} <span class="muted">→ {humanize(route.to)}</span>
                </>
              ) : (
                humanize(route.to)
              )}
            </label>
          ))}
        </div>
        <FieldIssues target="next" issues={nextIssues} />
      </fieldset>
      <div class="field">
        <label for="decision-reason">Reason for this route</label>
        <textarea
          id="decision-reason"
          rows={2}
          value={draft.reason}
          aria-describedby={reasonIssues ? errorId("reason") : undefined}
          aria-invalid={reasonIssues ? true : undefined}
          onInput={(e) => update({ reason: (e.target as HTMLTextAreaElement).value })}
        />
        <FieldIssues target="reason" issues={reasonIssues} />
      </div>
    </>
  );
}
