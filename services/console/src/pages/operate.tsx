// Operators: the escalation queue (§3.3, §3.4) and importing, binding and publishing a process (§7).
import type { DraftView, Page, PersonWorkItem, Published } from "@baton/protocol";
import { useState } from "preact/hooks";
import { useCalls, useLoad, useSession } from "../context.ts";
import { humanize } from "../map/model.ts";
import { href } from "../router.ts";
import { ErrorBox, Loading, PageTitle, TestMark, Time } from "../ui.tsx";

/** The operators page. */
export function Operate() {
  const session = useSession();
  return (
    <>
      <PageTitle text="Operators">Operators</PageTitle>
      {!session.operator && (
        <ErrorBox
          title="Operators only."
          message="Your token does not carry the operator role; the server refuses these calls."
        />
      )}
      <Escalations />
      <Publish />
    </>
  );
}

function Escalations() {
  const calls = useCalls();
  const [loaded, reload] = useLoad(
    () => calls.tool<Page<PersonWorkItem>>("get_work", { limit: 100 }),
    "escalations",
  );
  return (
    <section aria-labelledby="escalations-title">
      <h2 id="escalations-title">Escalated steps</h2>
      <p class="toolbar">
        <button type="button" class="secondary" onClick={() => void reload()}>
          Refresh
        </button>
      </p>
      <Loading loaded={loaded}>
        {(page) => {
          const escalated = page.items.filter((i) => i.workItem.escalation);
          if (escalated.length === 0) return <p>No step is escalated.</p>;
          return (
            <ul class="cards" aria-label="Escalated steps">
              {escalated.map((entry) => {
                const e = entry.workItem.escalation!;
                return (
                  <li class="card" key={entry.workItem.id}>
                    <h3>
                      <a href={href("work", entry.runId, entry.workItem.id)}>
                        {humanize(entry.workItem.stepId)} in {entry.process}
                      </a>
                    </h3>
                    <p class="meta">
                      <span>
                        Run <a href={href("runs", entry.runId)}>{entry.runId}</a>
                      </span>
                      <span>
                        Escalated by {e.by}, <Time at={e.at} />
                      </span>
                      <TestMark mode={entry.mode} />
                    </p>
                    <p class="excerpt">{e.note}</p>
                    <p>
                      <a href={href("work", entry.runId, entry.workItem.id)}>Return, complete or fail it</a>
                    </p>
                  </li>
                );
              })}
            </ul>
          );
        }}
      </Loading>
    </section>
  );
}

function Publish() {
  const calls = useCalls();
  const [folderName, setFolderName] = useState("");
  const [source, setSource] = useState("");
  const [draft, setDraft] = useState<DraftView | null>(null);
  const [groups, setGroups] = useState<Record<string, string>>({});
  const [refusal, setRefusal] = useState<{ title: string; message: string; issues: string[] } | null>(null);
  const [published, setPublished] = useState<Published | null>(null);
  const [busy, setBusy] = useState(false);

  async function load(input: HTMLInputElement) {
    const file = input.files?.[0];
    if (file) setSource(await file.text());
  }

  async function importDraft(e: Event) {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    setPublished(null);
    const r = await calls.send<DraftView>("POST", "/api/processes", {
      folderName: folderName.trim() === "" ? null : folderName.trim(),
      source,
    });
    setBusy(false);
    if (!r.ok) {
      setDraft(null);
      setRefusal({ title: "Not imported.", message: r.error.message, issues: r.error.issues ?? [] });
      return;
    }
    setDraft(r.data);
    setGroups(Object.fromEntries(r.data.roles.map((role) => [role, r.data.bindings[role] ?? ""])));
  }

  async function publish(e: Event) {
    e.preventDefault();
    if (!draft) return;
    setBusy(true);
    setRefusal(null);
    const bindings = Object.fromEntries(Object.entries(groups).filter(([, g]) => g.trim() !== ""));
    if (Object.keys(bindings).length > 0) {
      const bound = await calls.send<DraftView>(
        "PUT",
        `/api/drafts/${encodeURIComponent(draft.draftId)}/bindings`,
        {
          bindings,
        },
      );
      if (!bound.ok) {
        setBusy(false);
        setRefusal({
          title: "Bindings refused.",
          message: bound.error.message,
          issues: bound.error.issues ?? [],
        });
        return;
      }
    }
    const r = await calls.send<Published>(
      "POST",
      `/api/drafts/${encodeURIComponent(draft.draftId)}/publish`,
      {},
    );
    setBusy(false);
    if (!r.ok) {
      setRefusal({ title: "Not published.", message: r.error.message, issues: r.error.issues ?? [] });
      return;
    }
    setPublished(r.data);
  }

  return (
    <section aria-labelledby="publish-title">
      <h2 id="publish-title">Import and publish a process</h2>
      {refusal && <ErrorBox title={refusal.title} message={refusal.message} issues={refusal.issues} />}
      <form onSubmit={importDraft} class="group">
        <div class="field">
          <label for="import-file">PROCESS.md file</label>
          <input
            id="import-file"
            type="file"
            accept=".md,text/markdown,text/plain"
            onChange={(e) => void load(e.target as HTMLInputElement)}
          />
        </div>
        <div class="field">
          <label for="import-source">PROCESS.md</label>
          <textarea
            id="import-source"
            rows={10}
            spellcheck={false}
            value={source}
            onInput={(e) => setSource((e.target as HTMLTextAreaElement).value)}
          />
        </div>
        <div class="field">
          <label for="import-folder">Folder name (optional)</label>
          <p class="hint" id="import-folder-hint">
            When the file travels as a folder, the folder's name must equal the process name.
          </p>
          <input
            id="import-folder"
            type="text"
            aria-describedby="import-folder-hint"
            value={folderName}
            onInput={(e) => setFolderName((e.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" disabled={busy || source.trim() === ""}>
          Import
        </button>
      </form>
      {draft && (
        <form onSubmit={publish} class="group" aria-labelledby="draft-title">
          <h3 id="draft-title">
            Draft of {draft.name} <span class="muted">(content hash {draft.contentHash.slice(0, 12)}…)</span>
          </h3>
          <p>{draft.description}</p>
          {draft.requires && draft.requires.systems.length > 0 && (
            <p>
              Needs access to: {draft.requires.systems.join(", ")} (the server does not check or grant it).
            </p>
          )}
          {draft.roles.length === 0 ? (
            <p>This process names no roles.</p>
          ) : (
            <fieldset class="field-group">
              <legend>Bind each role to a group</legend>
              {draft.roles.map((role) => (
                <div class="field" key={role}>
                  <label for={`bind-${role}`}>Group for the role {role}</label>
                  <input
                    id={`bind-${role}`}
                    type="text"
                    value={groups[role] ?? ""}
                    onInput={(e) => setGroups({ ...groups, [role]: (e.target as HTMLInputElement).value })}
                  />
                </div>
              ))}
            </fieldset>
          )}
          <button type="submit" class="primary" disabled={busy}>
            Bind and publish
          </button>
        </form>
      )}
      {published && (
        <p role="status">
          {published.unchanged ? "Nothing changed: the latest version is" : "Published"}{" "}
          <a href={href("processes", published.name, String(published.version))}>
            {published.name} v{published.version}
          </a>{" "}
          (content hash <code>{published.contentHash.slice(0, 12)}…</code>).
        </p>
      )}
    </section>
  );
}
