// The console's shell: sign-in, the header with its navigation, and the route's page.
import { useMemo, useState } from "preact/hooks";
import { type Session, SessionContext } from "./context.ts";
import { Baton, SignedOut } from "./mcp.ts";
import { Inbox } from "./pages/inbox.tsx";
import { Operate } from "./pages/operate.tsx";
import { Processes, ProcessPage } from "./pages/processes.tsx";
import { RunPage } from "./pages/run.tsx";
import { Runs } from "./pages/runs.tsx";
import { WorkItemPage } from "./pages/work-item.tsx";
import { href, useRoute } from "./router.ts";
import { clearToken, loadToken, readClaims, saveToken, takeTokenFromFragment } from "./session.ts";
import { PageTitle } from "./ui.tsx";

function initialToken(): string | null {
  const handed = takeTokenFromFragment();
  if (handed) saveToken(handed);
  return handed ?? loadToken();
}

/** The whole console. */
export function App() {
  const [token, setToken] = useState<string | null>(initialToken);
  const [notice, setNotice] = useState<string | null>(null);
  const session = useMemo<Session | null>(() => {
    const claims = token ? readClaims(token) : null;
    if (!token || !claims) return null;
    return {
      token,
      claims,
      baton: new Baton(token),
      operator: claims.roles.includes("operator"),
      signOut(reason) {
        clearToken();
        setNotice(reason ?? null);
        setToken(null);
      },
    };
  }, [token]);
  if (!session) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(t) => {
          saveToken(t);
          setNotice(null);
          setToken(t);
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session} />
    </SessionContext.Provider>
  );
}

function Shell({ session }: { session: Session }) {
  const route = useRoute();
  const [section = "inbox"] = route;
  const current = (name: string) => (section === name ? "page" : undefined);
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href()}>
          Baton
        </a>
        <nav aria-label="Main">
          <ul>
            <li>
              <a href={href()} aria-current={current("inbox") ?? (section === "work" ? "page" : undefined)}>
                Inbox
              </a>
            </li>
            <li>
              <a href={href("runs")} aria-current={current("runs")}>
                Runs
              </a>
            </li>
            <li>
              <a href={href("processes")} aria-current={current("processes")}>
                Processes
              </a>
            </li>
            {session.operator && (
              <li>
                <a href={href("operate")} aria-current={current("operate")}>
                  Operators
                </a>
              </li>
            )}
          </ul>
        </nav>
        <div class="who">
          <span>
            {session.claims.sub}
            {session.operator && <span class="muted"> · operator</span>}
          </span>
          <button type="button" class="link" onClick={() => session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="content" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: string[] }) {
  const [section, a, b] = route;
  switch (section) {
    case undefined:
    case "inbox":
      return <Inbox />;
    case "work":
      return a && b ? <WorkItemPage runId={a} workItemId={b} key={`${a}/${b}`} /> : <NotFound />;
    case "runs":
      return a ? <RunPage runId={a} key={a} /> : <Runs />;
    case "processes":
      return a ? <ProcessPage name={a} version={b ? Number(b) : null} key={`${a}/${b}`} /> : <Processes />;
    case "operate":
      return <Operate />;
    default:
      return <NotFound />;
  }
}

function NotFound() {
  return (
    <>
      <PageTitle text="Not found">Not found</PageTitle>
      <p>
        Nothing is here. Go to your <a href={href()}>inbox</a>.
      </p>
    </>
  );
}

/**
 * Sign-in with the dev issuer (issue #16): paste a bearer token, or open the link that
 * `baton token person <email> --console` prints. The token is checked by calling `describe`.
 */
function SignIn({ notice, onSignedIn }: { notice: string | null; onSignedIn: (token: string) => void }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    const token = text.trim().replace(/^Bearer\s+/i, "");
    if (!readClaims(token)) {
      setError("That is not a bearer token: paste the whole token that baton token printed.");
      return;
    }
    setBusy(true);
    try {
      const result = await new Baton(token).call("describe");
      if (result.ok) onSignedIn(token);
      else setError(result.error.message);
    } catch (e) {
      setError(e instanceof SignedOut ? `The server refused this token (${e.message}).` : String(e));
    } finally {
      setBusy(false);
    }
  }
  return (
    <main id="content" class="signin">
      <PageTitle text="Sign in">Sign in to Baton</PageTitle>
      {notice && <p role="status">{notice}</p>}
      <form onSubmit={submit} noValidate>
        <label for="token">Bearer token</label>
        <p class="hint" id="token-hint">
          Mint one with <code>pnpm baton token person you@example.com --groups manager --console</code>, which
          prints a link that signs you in directly, or paste the token here.
        </p>
        <textarea
          id="token"
          name="token"
          rows={4}
          autoComplete="off"
          spellcheck={false}
          aria-describedby={error ? "token-hint token-error" : "token-hint"}
          aria-invalid={error ? true : undefined}
          value={text}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
        {error && (
          <p class="field-error" id="token-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
