// Run data (§3.1): the inputs and what each completed step recorded, with its evidence.
import type { Completion, EvidenceItem, RunData } from "@baton/protocol";
import { humanize } from "../map/model.ts";
import { isWebLink, Time, Value } from "../ui.tsx";

/** Evidence items: files open their bytes through their short-lived `url` (§5); web links open. */
export function EvidenceList({ items }: { items: readonly EvidenceItem[] | undefined }) {
  if (!items || items.length === 0) return null;
  return (
    <ul class="evidence">
      {items.map((e) => (
        <li key={`${e.kind}:${e.ref}`}>
          <span class="badge">{e.kind}</span>{" "}
          {e.kind === "file" && e.url ? (
            <a href={e.url} rel="noopener">
              File {e.ref}
            </a>
          ) : isWebLink(e.ref) ? (
            <a href={e.ref} rel="noopener noreferrer" target="_blank">
              {e.ref}
            </a>
          ) : (
            <span>{e.ref}</span>
          )}
          {e.sha256 && (
            <span class="muted hash" title={`SHA-256 ${e.sha256}`}>
              {" "}
              sha256 {e.sha256.slice(0, 12)}…
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

function Fields({ values }: { values: Record<string, unknown> }) {
  const entries = Object.entries(values);
  if (entries.length === 0) return <p class="muted">None.</p>;
  return (
    <dl class="fields">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>
            <Value value={v} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function CompletionView({ c }: { c: Completion }) {
  return (
    <>
      {c.decision && (
        <p>
          Decision: <strong>{c.decision}</strong>
        </p>
      )}
      {c.note && <p class="note">Note: {c.note}</p>}
      {c.output && Object.keys(c.output).length > 0 && <Fields values={c.output} />}
      {c.summary && <p class="summary">Summary: {c.summary}</p>}
      {c.next && (
        <p>
          Next: {humanize(c.next)}
          {c.reason ? ` (reason: ${c.reason})` : ""}
        </p>
      )}
      <EvidenceList items={c.evidence} />
      {(c.by || c.at) && (
        <p class="muted">
          By {c.by ?? "—"}, <Time at={c.at} />
        </p>
      )}
    </>
  );
}

/** The run data so far: inputs, then each step that recorded something, with its earlier completions. */
export function RunDataView({ data, headingLevel = 2 }: { data: RunData; headingLevel?: 2 | 3 }) {
  const H = `h${headingLevel}` as "h2";
  const Sub = `h${headingLevel + 1}` as "h3";
  const steps = Object.entries(data.steps).filter(([, s]) => s.by || s.at || s.history.length > 0);
  return (
    <section aria-labelledby="run-data-title">
      <H id="run-data-title">Run data</H>
      <Sub>Inputs</Sub>
      <Fields values={data.inputs} />
      {steps.map(([id, s]) => (
        <section key={id} class="step-data" aria-label={`Step ${humanize(id)}`}>
          <Sub>
            {humanize(id)} <span class="muted">({id})</span>
          </Sub>
          {s.by || s.at ? <CompletionView c={s} /> : <p class="muted">Not completed now.</p>}
          {s.history.length > 0 && (
            <details>
              <summary>
                {s.history.length} earlier completion{s.history.length === 1 ? "" : "s"}
              </summary>
              <ol>
                {s.history.map((h, i) => (
                  <li key={i}>
                    <CompletionView c={h} />
                  </li>
                ))}
              </ol>
            </details>
          )}
        </section>
      ))}
    </section>
  );
}
