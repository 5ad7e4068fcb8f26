// Who am I (issue #16): the signed-in identity as the server sees it, so a person can tell why they do or do not see a work item.
import type { WhoAmI } from "@baton/protocol";
import { useCalls, useLoad, useSession } from "../context.ts";
import { href } from "../router.ts";
import { DEV_ISSUER, issuerName } from "../sign-in.ts";
import { Loading, PageTitle, Time } from "../ui.tsx";

/** A list of names, or "none". */
function Names({ names, label }: { names: string[]; label: string }) {
  if (names.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="names" aria-label={label}>
      {names.map((n) => (
        <li key={n}>
          <code>{n}</code>
        </li>
      ))}
    </ul>
  );
}

/**
 * The "who am I" page: `GET /api/whoami` read afresh (after the deployment's claim mapping: the
 * values every rule is checked against), how the person signed in, and what each value decides.
 */
export function Me() {
  const calls = useCalls();
  const session = useSession();
  const [loaded] = useLoad(() => calls.get<WhoAmI>("/api/whoami"), `whoami:${session.token}`);
  const via = session.via;
  return (
    <>
      <PageTitle text="Who am I">Who am I</PageTitle>
      <p>
        You as this server sees you: what it read from your sign-in token with this deployment's claim
        mapping. Every rule is checked against these values, not against what your sign-in page shows.
      </p>
      <Loading loaded={loaded}>
        {(me) => (
          <>
            <dl class="facts" aria-label="Your identity">
              <div>
                <dt>Id</dt>
                <dd>
                  <code>{me.id}</code>
                </dd>
              </div>
              <div>
                <dt>Organization</dt>
                <dd>
                  <code>{me.org}</code>
                </dd>
              </div>
              <div>
                <dt>Kind</dt>
                <dd>{me.kind}</dd>
              </div>
              <div>
                <dt>Groups</dt>
                <dd>
                  <Names names={me.groups} label="Your groups" />
                </dd>
              </div>
              <div>
                <dt>Roles</dt>
                <dd>
                  <Names names={me.roles} label="Your roles" />
                </dd>
              </div>
              <div>
                <dt>Signed in</dt>
                <dd>
                  {via.method === "oidc"
                    ? `at ${issuerName(via.issuer)}`
                    : via.issuer === null || via.issuer === DEV_ISSUER
                      ? "with a token of the dev issuer (baton token)"
                      : `with a pasted token of ${issuerName(via.issuer)}`}
                  {me.client && (
                    <>
                      {" "}
                      through the client <code>{me.client}</code>
                    </>
                  )}
                </dd>
              </div>
              <div>
                <dt>Token expires</dt>
                <dd>
                  <Time at={me.expiresAt} />
                </dd>
              </div>
            </dl>
            <h2>What this decides</h2>
            <ul>
              <li>
                A work item assigned to a group reaches your <a href={href()}>inbox</a> when that group is one
                of yours
                {me.groups.length === 0 ? (
                  <>
                    . <strong>The server read no groups from your token</strong>: if you expect some, ask your
                    administrator to check which claim holds them (<code>BATON_AUTH_GROUPS_CLAIMS</code>).
                  </>
                ) : (
                  <>: {me.groups.join(", ")}.</>
                )}
              </li>
              <li>
                A work item assigned to a person reaches you when it names <code>{me.id}</code>.
              </li>
              <li>
                You see the processes and runs of the organization <code>{me.org}</code> only.
              </li>
              <li>
                {me.roles.includes("operator")
                  ? "You are an operator: you see the escalation queue, cancel runs, send events and publish processes."
                  : "You are not an operator: the escalation queue, cancelling runs, sending events and publishing are for operators."}
              </li>
              {me.kind === "agent" && (
                <li>This is an agent's token: agents claim steps over MCP, people decide in the inbox.</li>
              )}
            </ul>
          </>
        )}
      </Loading>
    </>
  );
}
