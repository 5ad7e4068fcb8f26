// Published processes (list_processes) and one process: its versions, hashes, bindings and map.
import type { Page, ProcessSummary, VersionDetail, VersionList } from "@baton/protocol";
import { useCalls, useLoad } from "../context.ts";
import { ProcessMapView } from "../map/map-view.tsx";
import { href } from "../router.ts";
import { Loading, PageTitle, Time } from "../ui.tsx";

/** The processes page. */
export function Processes() {
  const calls = useCalls();
  const [loaded] = useLoad(() => calls.tool<Page<ProcessSummary>>("list_processes", {}), "processes");
  return (
    <>
      <PageTitle text="Processes">Processes</PageTitle>
      <Loading loaded={loaded}>
        {(page) =>
          page.items.length === 0 ? (
            <p>No process is published in your organization yet.</p>
          ) : (
            <ul class="cards" aria-label="Published processes">
              {page.items.map((p) => (
                <li class="card" key={p.name}>
                  <h2>
                    <a href={href("processes", p.name)}>{p.name}</a> <span class="muted">v{p.version}</span>
                  </h2>
                  <p>{p.description}</p>
                  {p.requires && p.requires.systems.length > 0 && (
                    <p class="muted">Needs access to: {p.requires.systems.join(", ")}</p>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Loading>
    </>
  );
}

/** One process: every version with its content hash and bindings, and the map of the chosen one. */
export function ProcessPage({ name, version }: { name: string; version: number | null }) {
  const calls = useCalls();
  const [list] = useLoad(
    () => calls.get<VersionList>(`/api/processes/${encodeURIComponent(name)}/versions`),
    `versions:${name}`,
  );
  return (
    <>
      <PageTitle text={name}>{name}</PageTitle>
      <Loading loaded={list}>
        {(versions) => {
          const shown = version ?? versions.versions[0]?.version ?? 1;
          return (
            <>
              <section aria-labelledby="versions-title">
                <h2 id="versions-title">Versions</h2>
                <table class="table">
                  <caption class="visually-hidden">Published versions, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Version</th>
                      <th scope="col">Content hash</th>
                      <th scope="col">Bindings</th>
                      <th scope="col">Published</th>
                    </tr>
                  </thead>
                  <tbody>
                    {versions.versions.map((v) => (
                      <tr key={v.version}>
                        <th scope="row">
                          {v.version === shown ? (
                            <span aria-current="true">v{v.version} (shown)</span>
                          ) : (
                            <a href={href("processes", name, String(v.version))}>v{v.version}</a>
                          )}
                        </th>
                        <td>
                          <code class="hash">{v.contentHash}</code>
                        </td>
                        <td>
                          {Object.keys(v.bindings).length === 0
                            ? "—"
                            : Object.entries(v.bindings).map(([role, group]) => (
                                <div key={role}>
                                  {role} → <code>{group}</code>
                                </div>
                              ))}
                        </td>
                        <td>
                          <Time at={v.publishedAt} /> by {v.publishedBy}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </section>
              <Version name={name} version={shown} />
            </>
          );
        }}
      </Loading>
    </>
  );
}

function Version({ name, version }: { name: string; version: number }) {
  const calls = useCalls();
  const [loaded] = useLoad(
    () => calls.get<VersionDetail>(`/api/processes/${encodeURIComponent(name)}/versions/${version}`),
    `version:${name}:${version}`,
  );
  return (
    <Loading loaded={loaded}>
      {(v) => (
        <>
          <section aria-labelledby="map-title">
            <h2 id="map-title">Map of version {v.version}</h2>
            <p>{v.definition.description}</p>
            <ProcessMapView process={v.definition} />
          </section>
          <details>
            <summary>PROCESS.md of version {v.version}</summary>
            <pre class="source">{v.source}</pre>
          </details>
        </>
      )}
    </Loading>
  );
}
