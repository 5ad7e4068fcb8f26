// The console's shell: sign-in, the header with its navigation, and the route's page.
import type { WhoAmI } from "@baton/protocol";
import type { User } from "oidc-client-ts";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { admin } from "./api.ts";
import { type Session, SessionContext, type SignedInVia } from "./context.ts";
import { Baton, SignedOut } from "./mcp.ts";
import { Inbox } from "./pages/inbox.tsx";
import { Me } from "./pages/me.tsx";
import { Operate } from "./pages/operate.tsx";
import { Processes, ProcessPage } from "./pages/processes.tsx";
import { RunPage } from "./pages/run.tsx";
import { Runs } from "./pages/runs.tsx";
import { WorkItemPage } from "./pages/work-item.tsx";
import { href, useRoute } from "./router.ts";
import { clearToken, loadToken, readClaims, saveToken, takeTokenFromFragment } from "./session.ts";
import { DEV_ISSUER, finishRedirect, issuerName, loadSignInSetup, type SignInSetup } from "./sign-in.ts";
import { ErrorBox, PageTitle } from "./ui.tsx";

/** Where the console stands: finding out how to sign in, signed out (with why), or signed in. */
type State =
  | { phase: "starting" }
  | { phase: "unreachable"; message: string }
  | { phase: "signed-out"; notice: string | null }
  | { phase: "signed-in"; token: string; me: WhoAmI };

/**
 * Asks the server who `token` is (`GET /api/whoami`): the identity, or why not, in words, and
 * whether the server refused the token (401) rather than could not answer now.
 */
async function whoIs(
  token: string,
): Promise<{ ok: true; me: WhoAmI } | { ok: false; refused: boolean; message: string }> {
  try {
    const answer = await admin<WhoAmI>(token, "GET", "/api/whoami");
    if (answer.ok) return { ok: true, me: answer.data };
    return { ok: false, refused: answer.error.code !== "retry", message: answer.error.message };
  } catch (error) {
    return error instanceof SignedOut
      ? { ok: false, refused: true, message: `The server refused this token: ${error.message}` }
      : { ok: false, refused: false, message: String(error) };
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The whole console. */
export function App() {
  const [setup, setSetup] = useState<SignInSetup | null>(null);
  const [state, setState] = useState<State>({ phase: "starting" });
  const taken = useRef<string | null>(null);

  /**
   * Takes `token` as the session's if the server accepts it. A refused token is forgotten (`refused`)
   * and the person signed out saying why. When the server cannot answer now, a renewed token
   * replaces the old one all the same; a first one waits for a retry (the page says so).
   */
  const take = useCallback(async (token: string, refused: () => Promise<void> | void) => {
    if (taken.current === token) return;
    taken.current = token;
    const who = await whoIs(token);
    if (taken.current !== token) return;
    if (who.ok) {
      setState({ phase: "signed-in", token, me: who.me });
      return;
    }
    if (!who.refused) {
      // Signed in already (a renewed token): carry on with it and the identity read before.
      setState((now) =>
        now.phase === "signed-in" ? { ...now, token } : { phase: "unreachable", message: who.message },
      );
      return;
    }
    taken.current = null;
    await refused();
    setState({ phase: "signed-out", notice: who.message });
  }, []);

  // Once: how to sign in, then the session this tab already has or is handed.
  useEffect(() => {
    void (async () => {
      let found: SignInSetup;
      try {
        found = await loadSignInSetup();
      } catch (error) {
        setState({ phase: "unreachable", message: message(error) });
        return;
      }
      setSetup(found);
      if (found.method === "token") {
        const handed = takeTokenFromFragment();
        if (handed) saveToken(handed);
        const token = handed ?? loadToken();
        if (token) await take(token, () => clearToken());
        else setState({ phase: "signed-out", notice: null });
        return;
      }
      const { manager } = found;
      let user: User | null;
      try {
        user = (await finishRedirect(manager)) ?? (await manager.getUser());
      } catch (error) {
        setState({
          phase: "signed-out",
          notice: `The sign-in at ${issuerName(found.issuer)} did not complete: ${message(error)}`,
        });
        return;
      }
      if (user && !user.expired) await take(user.access_token, () => manager.removeUser());
      else {
        if (user) await manager.removeUser();
        setState({ phase: "signed-out", notice: null });
      }
    })();
  }, [take]);

  // OIDC: renew with the refresh token before the access token expires (when the issuer gave one),
  // take each renewed token, and sign in again when it expired anyway.
  useEffect(() => {
    if (setup?.method !== "oidc") return;
    const { manager } = setup;
    const refused = () => manager.removeUser();
    const offExpiring = manager.events.addAccessTokenExpiring(() => {
      void manager
        .getUser()
        .then((user) => (user?.refresh_token ? manager.signinSilent() : null))
        .catch(() => {
          // The expired event signs the person out.
        });
    });
    const offLoaded = manager.events.addUserLoaded((user) => void take(user.access_token, refused));
    const offExpired = manager.events.addAccessTokenExpired(() => {
      taken.current = null;
      void manager.removeUser();
      setState({
        phase: "signed-out",
        notice: `Your sign-in at ${issuerName(setup.issuer)} has expired. Sign in again to carry on.`,
      });
    });
    return () => {
      offExpiring();
      offLoaded();
      offExpired();
    };
  }, [setup, take]);

  const signedIn = state.phase === "signed-in" ? state : null;
  const session = useMemo<Session | null>(() => {
    if (!signedIn || !setup) return null;
    const via: SignedInVia =
      setup.method === "oidc"
        ? { method: "oidc", issuer: setup.issuer }
        : { method: "token", issuer: setup.issuer };
    return {
      token: signedIn.token,
      me: signedIn.me,
      baton: new Baton(signedIn.token),
      operator: signedIn.me.roles.includes("operator"),
      via,
      signOut(reason) {
        taken.current = null;
        if (setup.method === "token") {
          clearToken();
          setState({ phase: "signed-out", notice: reason ?? null });
          return;
        }
        const { manager } = setup;
        const local = () => {
          void manager.removeUser();
          setState({ phase: "signed-out", notice: reason ?? null });
        };
        // A refused token signs out here only; the button also ends the session at the issuer,
        // which sends the person back to /ui/ (when it offers an end-session endpoint).
        if (reason !== undefined) return local();
        void manager
          .getUser()
          .then((user) =>
            manager.signoutRedirect(user?.id_token ? { id_token_hint: user.id_token } : undefined),
          )
          .catch(local);
      },
    };
  }, [signedIn?.token, signedIn?.me, setup]);

  if (state.phase === "starting") return <p role="status">Loading…</p>;
  if (state.phase === "unreachable")
    return (
      <main id="content" class="signin">
        <PageTitle text="Baton is not reachable">Baton is not reachable</PageTitle>
        <ErrorBox title="The server could not answer now." message={state.message} />
        <button type="button" onClick={() => location.reload()}>
          Try again
        </button>
      </main>
    );
  if (!session || !setup) {
    const notice = state.phase === "signed-out" ? state.notice : null;
    if (setup?.method === "oidc")
      return (
        <OidcSignIn
          issuer={setup.issuer}
          notice={notice}
          onSignIn={() => setup.manager.signinRedirect({ url_state: location.hash || "#/" })}
        />
      );
    return (
      <SignIn
        issuer={setup?.method === "token" ? setup.issuer : null}
        notice={notice}
        onSignedIn={(token, me) => {
          saveToken(token);
          taken.current = token;
          setState({ phase: "signed-in", token, me });
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
            <a href={href("me")} aria-current={current("me")} title="Who am I: you as the server sees you">
              {session.me.id}
            </a>
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
    case "me":
      return <Me />;
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
 * Sign-in at the OIDC issuer (issue #16): the authorization code flow with PKCE. The button leaves
 * for the issuer's sign-in page, which sends the person back to `/ui/` with a code.
 */
function OidcSignIn({
  issuer,
  notice,
  onSignIn,
}: {
  issuer: string;
  notice: string | null;
  onSignIn: () => Promise<void>;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function start() {
    setBusy(true);
    setError(null);
    try {
      await onSignIn();
    } catch (e) {
      setError(`${issuerName(issuer)} could not be reached: ${message(e)}`);
      setBusy(false);
    }
  }
  return (
    <main id="content" class="signin">
      <PageTitle text="Sign in">Sign in to Baton</PageTitle>
      {notice && <p role="status">{notice}</p>}
      <p>
        You sign in at <strong>{issuerName(issuer)}</strong>, your organization's sign-in; it sends you back
        here.
      </p>
      {error && <ErrorBox title="Could not start the sign-in." message={error} />}
      <button type="button" onClick={() => void start()} disabled={busy}>
        {busy ? "Going to the sign-in page…" : `Sign in with ${issuerName(issuer)}`}
      </button>
    </main>
  );
}

/**
 * Sign-in with a bearer token (issue #16): paste one, or open the link that `baton token person
 * <email> --console` prints (dev issuer). The server is asked who the token is (`GET /api/whoami`).
 */
function SignIn({
  issuer,
  notice,
  onSignedIn,
}: {
  issuer: string | null;
  notice: string | null;
  onSignedIn: (token: string, me: WhoAmI) => void;
}) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dev = issuer === null || issuer === DEV_ISSUER;
  async function submit(event: Event) {
    event.preventDefault();
    const token = text.trim().replace(/^Bearer\s+/i, "");
    if (!readClaims(token)) {
      setError(
        dev
          ? "That is not a bearer token: paste the whole token that baton token printed."
          : "That is not a bearer token: paste the whole access token (a JWT).",
      );
      return;
    }
    setBusy(true);
    try {
      const who = await whoIs(token);
      if (who.ok) onSignedIn(token, who.me);
      else setError(who.message);
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
          {dev ? (
            <>
              Mint one with <code>pnpm baton token person you@example.com --groups manager --console</code>,
              which prints a link that signs you in directly, or paste the token here.
            </>
          ) : (
            <>
              Paste an access token from <strong>{issuerName(issuer)}</strong> for this server. (This server
              has no console client at its issuer; set <code>BATON_CONSOLE_CLIENT_ID</code> to sign in there.)
            </>
          )}
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
