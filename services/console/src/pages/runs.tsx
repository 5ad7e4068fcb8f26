// The organization's runs (list_runs), newest first, filtered by process and state.
import type { Page, RunSummary } from "@baton/protocol";
import { useState } from "preact/hooks";
import { useCalls, useLoad } from "../context.ts";
import { href } from "../router.ts";
import { Badge, Loading, PageTitle, Time } from "../ui.tsx";

const STATES = ["active", "waiting", "ended", "cancelled"] as const;

/** The runs page. */
export function Runs() {
  const calls = useCalls();
  const [process, setProcess] = useState("");
  const [state, setState] = useState("");
  const [cursor, setCursor] = useState<string | null>(null);
  const [filter, setFilter] = useState({ process: "", state: "" });
  const [loaded] = useLoad(
    () =>
      calls.tool<Page<RunSummary>>("list_runs", {
        limit: 50,
        ...(filter.process ? { process: filter.process } : {}),
        ...(filter.state ? { state: filter.state } : {}),
        ...(cursor ? { cursor } : {}),
      }),
    `runs:${filter.process}:${filter.state}:${cursor}`,
  );
  return (
    <>
      <PageTitle text="Runs">Runs</PageTitle>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setCursor(null);
          setFilter({ process: process.trim(), state });
        }}
      >
        <div class="field">
          <label for="filter-process">Process</label>
          <input
            id="filter-process"
            type="text"
            value={process}
            onInput={(e) => setProcess((e.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="filter-state">State</label>
          <select
            id="filter-state"
            value={state}
            onChange={(e) => setState((e.target as HTMLSelectElement).value)}
          >
            <option value="">Any</option>
            {STATES.map((s) => (
              <option value={s} key={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Show runs</button>
      </form>
      <Loading loaded={loaded}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No runs match.</p>
          ) : (
            <>
              <table class="table">
                <caption class="visually-hidden">Runs, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Run</th>
                    <th scope="col">Process</th>
                    <th scope="col">State</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Started</th>
                  </tr>
                </thead>
                <tbody>
                  {page.items.map((r) => (
                    <tr key={r.id}>
                      <th scope="row">
                        <a href={href("runs", r.id)}>{r.id}</a>
                      </th>
                      <td>
                        {r.process} v{r.version}
                      </td>
                      <td>
                        <Badge>{r.state}</Badge>
                      </td>
                      <td>{r.outcome ?? "—"}</td>
                      <td>
                        <Time at={r.startedAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {page.nextCursor && (
                <p class="toolbar">
                  <button type="button" class="secondary" onClick={() => setCursor(page.nextCursor)}>
                    Older runs
                  </button>
                </p>
              )}
            </>
          )
        }
      </Loading>
    </>
  );
}
