// A run: its state and outcome, each step's state, the timeline from the journal, and the map.
import type { JournalEntry, JournalPage, RunView, SendEventResult, VersionDetail } from "@baton/protocol";
import { useState } from "preact/hooks";
import { EvidenceList, RunDataView } from "../components/run-data.tsx";
import { useCalls, useLoad, useSession } from "../context.ts";
import { ProcessMapView } from "../map/map-view.tsx";
import { humanize } from "../map/model.ts";
import { href } from "../router.ts";
import { Badge, ErrorBox, Loading, PageTitle, TestMark, Time } from "../ui.tsx";
import { itemKind } from "./inbox.tsx";

const STATE_TONE: Record<string, string> = {
  active: "active",
  waiting: "waiting",
  ended: "ended",
  cancelled: "cancelled",
  ready: "active",
  claimed: "active",
  done: "ended",
  failed: "cancelled",
};

/** The run page. */
export function RunPage({ runId }: { runId: string }) {
  const calls = useCalls();
  const [loaded, reload] = useLoad(() => calls.tool<RunView>("get_run", { runId }), `run:${runId}`);
  return (
    <Loading loaded={loaded}>
      {(view) => (
        <>
          <PageTitle text={`Run ${view.run.id}`}>
            Run of {view.run.process} <span class="muted">{view.run.id}</span>
          </PageTitle>
          <dl class="facts">
            <div>
              <dt>State</dt>
              <dd>
                <Badge tone={STATE_TONE[view.run.state]}>{view.run.state}</Badge>
              </dd>
            </div>
            <div>
              <dt>Outcome</dt>
              <dd>{view.run.outcome ? <strong>{view.run.outcome}</strong> : "—"}</dd>
            </div>
            <div>
              <dt>Process</dt>
              <dd>
                <a href={href("processes", view.run.process, String(view.run.version))}>
                  {view.run.process} v{view.run.version}
                </a>{" "}
                <TestMark mode={view.run.mode} />
              </dd>
            </div>
            <div>
              <dt>Started</dt>
              <dd>
                <Time at={view.run.startedAt} /> by {view.run.startedBy}
              </dd>
            </div>
            <div>
              <dt>Updated</dt>
              <dd>
                <Time at={view.run.updatedAt} />
              </dd>
            </div>
            {view.run.ended && (
              <div>
                <dt>Ended</dt>
                <dd>
                  <Time at={view.run.ended.at} /> by {view.run.ended.by}
                  {view.run.ended.note ? `: ${view.run.ended.note}` : ""}
                </dd>
              </div>
            )}
          </dl>
          <section aria-labelledby="steps-title">
            <h2 id="steps-title">Steps</h2>
            <table class="table">
              <caption class="visually-hidden">Each step's state</caption>
              <thead>
                <tr>
                  <th scope="col">Step</th>
                  <th scope="col">Kind</th>
                  <th scope="col">State</th>
                  <th scope="col">Due</th>
                </tr>
              </thead>
              <tbody>
                {view.steps.map((s) => (
                  <tr key={s.id}>
                    <th scope="row">{humanize(s.id)}</th>
                    <td>{s.kind}</td>
                    <td>
                      {s.state ? (
                        <Badge tone={STATE_TONE[s.state]}>{s.state}</Badge>
                      ) : (
                        <span class="muted">not reached</span>
                      )}
                    </td>
                    <td>
                      {s.due ? <Time at={s.due} /> : "—"} {s.overdue && <Badge tone="overdue">Overdue</Badge>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          {view.workItems.length > 0 && (
            <section aria-labelledby="open-title">
              <h2 id="open-title">Open work items</h2>
              <ul>
                {view.workItems.map((w) => (
                  <li key={w.id}>
                    <a href={href("work", view.run.id, w.id)}>
                      {itemKind(w)}: {humanize(w.stepId)}
                    </a>
                  </li>
                ))}
              </ul>
            </section>
          )}
          <RunMap view={view} />
          <Timeline runId={view.run.id} updatedAt={view.run.updatedAt} />
          <RunDataView data={view.data} />
          <OperatorActions view={view} onDone={reload} />
        </>
      )}
    </Loading>
  );
}

function RunMap({ view }: { view: RunView }) {
  const calls = useCalls();
  const { process, version } = view.run;
  const [loaded] = useLoad(
    () => calls.get<VersionDetail>(`/api/processes/${encodeURIComponent(process)}/versions/${version}`),
    `version:${process}:${version}`,
  );
  const states = new Map(view.steps.map((s) => [s.id, s.state]));
  return (
    <section aria-labelledby="map-title">
      <h2 id="map-title">Where the run stands</h2>
      <Loading loaded={loaded}>{(v) => <ProcessMapView process={v.definition} states={states} />}</Loading>
    </section>
  );
}

function entryText(e: JournalEntry): string {
  const args = (e.detail.args ?? {}) as Record<string, unknown>;
  switch (e.command) {
    case "start_run":
      return `started the run (${args.mode === "test" ? "test" : "live"})`;
    case "claim":
      return `claimed ${humanize(String(args.stepId ?? ""))}`;
    case "renew":
      return "renewed the claim";
    case "submit":
      return `submitted${args.next ? `, next ${humanize(String(args.next))}` : ""}`;
    case "escalate":
      return `escalated: ${String(args.note ?? "")}`;
    case "decide":
      return `decided ${String(args.decision ?? "")}${args.note ? `: ${String(args.note)}` : ""}`;
    case "cancel":
      return `cancelled the run: ${String(args.reason ?? "")}`;
    case "send_event":
      return `sent the event ${String(args.name ?? "")}`;
    case "tick":
      return "timers fell due";
    default:
      return e.command;
  }
}

/** The timeline from the run's journal (ARCHITECTURE rule 6): who, what, when, evidence, version and hash. */
function Timeline({ runId, updatedAt }: { runId: string; updatedAt: string }) {
  const calls = useCalls();
  const [entries, setEntries] = useState<JournalEntry[]>([]);
  const [loaded] = useLoad(async () => {
    const all: JournalEntry[] = [];
    let after = 0;
    for (;;) {
      const page = await calls.get<JournalPage>(
        `/api/runs/${encodeURIComponent(runId)}/journal?after=${after}`,
      );
      if (!page.ok) return page;
      all.push(...page.data.entries);
      if (page.data.nextAfter === null) break;
      after = page.data.nextAfter;
    }
    setEntries(all);
    return { ok: true as const, data: all };
  }, `journal:${runId}:${updatedAt}`);
  return (
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline</h2>
      <Loading loaded={loaded}>
        {() => (
          <ol class="timeline">
            {entries.map((e) => {
              const args = (e.detail.args ?? {}) as {
                evidence?: { kind: "file" | "link"; ref: string; url?: string }[];
              };
              const events = (e.detail.events ?? []) as { type: string; stepId?: string }[];
              return (
                <li key={e.rev}>
                  <p>
                    <Time at={e.at} /> · <strong>{e.actor}</strong> {entryText(e)}
                    {e.detail.error ? <span class="muted"> (refused: {String(e.detail.error)})</span> : null}
                  </p>
                  <EvidenceList items={args.evidence} />
                  {events.length > 0 && (
                    <p class="muted small">
                      {events.map((ev) => `${ev.type}${ev.stepId ? ` ${ev.stepId}` : ""}`).join(", ")}
                    </p>
                  )}
                  <p class="muted small">
                    {e.process} v{e.version} · content hash{" "}
                    <code title={e.contentHash}>{e.contentHash.slice(0, 12)}…</code>
                  </p>
                </li>
              );
            })}
          </ol>
        )}
      </Loading>
    </section>
  );
}

/** Operators (§3.5, §3.6): cancel the run with a reason; send an event to it. */
function OperatorActions({ view, onDone }: { view: RunView; onDone: () => Promise<void> }) {
  const session = useSession();
  const calls = useCalls();
  const [reason, setReason] = useState("");
  const [eventName, setEventName] = useState("");
  const [eventData, setEventData] = useState("");
  const [message, setMessage] = useState<{ title: string; message: string; issues: string[] } | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  if (!session.operator) return null;
  const open = view.run.state === "active" || view.run.state === "waiting";
  async function cancel(e: Event) {
    e.preventDefault();
    setMessage(null);
    const r = await calls.tool<RunView>("cancel", {
      runId: view.run.id,
      reason,
      requestId: crypto.randomUUID(),
    });
    if (!r.ok)
      return setMessage({ title: "Not cancelled.", message: r.error.message, issues: r.error.issues ?? [] });
    setStatus("The run was cancelled.");
    await onDone();
  }
  async function send(e: Event) {
    e.preventDefault();
    setMessage(null);
    let data: unknown;
    if (eventData.trim() !== "") {
      try {
        data = JSON.parse(eventData);
      } catch {
        data = eventData;
      }
    }
    const r = await calls.tool<SendEventResult>("send_event", {
      runId: view.run.id,
      name: eventName,
      ...(data !== undefined ? { data } : {}),
      requestId: crypto.randomUUID(),
    });
    if (!r.ok)
      return setMessage({ title: "Event not sent.", message: r.error.message, issues: r.error.issues ?? [] });
    setStatus(
      r.data.consumedBy
        ? `The event was consumed by ${humanize(r.data.consumedBy)}.`
        : "The event is held for a later wait.",
    );
    await onDone();
  }
  if (!open) return null;
  return (
    <section aria-labelledby="operator-title" class="operator">
      <h2 id="operator-title">Operator actions</h2>
      {message && <ErrorBox title={message.title} message={message.message} issues={message.issues} />}
      {status && <p role="status">{status}</p>}
      <form onSubmit={send} class="group">
        <h3>Send an event</h3>
        <div class="field">
          <label for="event-name">Event name</label>
          <input
            id="event-name"
            type="text"
            value={eventName}
            onInput={(e) => setEventName((e.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="event-data">Data (optional, a JSON object)</label>
          <textarea
            id="event-data"
            rows={2}
            value={eventData}
            onInput={(e) => setEventData((e.target as HTMLTextAreaElement).value)}
          />
        </div>
        <button type="submit">Send event</button>
      </form>
      <form onSubmit={cancel} class="group">
        <h3>Cancel the run</h3>
        <div class="field">
          <label for="cancel-reason">Reason</label>
          <textarea
            id="cancel-reason"
            rows={2}
            value={reason}
            onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)}
          />
        </div>
        <button type="submit" class="danger">
          Cancel the run
        </button>
      </form>
    </section>
  );
}
