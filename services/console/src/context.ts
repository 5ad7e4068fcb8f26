// What every page needs: the signed-in person and their clients.
import type { ToolName, ToolResult, WhoAmI } from "@baton/protocol";
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useState } from "preact/hooks";
import { admin } from "./api.ts";
import type { Baton } from "./mcp.ts";
import { SignedOut } from "./mcp.ts";

/** How the person signed in: a pasted or linked bearer token, or at the OIDC issuer (issue #16). */
export type SignedInVia = { method: "token"; issuer: string | null } | { method: "oidc"; issuer: string };

/** The signed-in session. */
export interface Session {
  /** The bearer token every call sends (an OIDC access token is replaced when it is renewed). */
  token: string;
  /** The person as the server sees them (`GET /api/whoami` when the token was taken): never read from the token here. */
  me: WhoAmI;
  baton: Baton;
  /** Holds the operator role, as the server said; it checks every call regardless. */
  operator: boolean;
  via: SignedInVia;
  /** Signs out (at the issuer too, with OIDC); `reason` is shown on the sign-in page. */
  signOut(reason?: string): void;
}

export const SessionContext = createContext<Session | null>(null);

/** The signed-in session (pages render only when signed in). */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("no session");
  return session;
}

/** A tool call or admin request as the signed-in person; a refused token signs out. */
export function useCalls() {
  const session = useSession();
  const guard = useCallback(
    async <T>(promise: Promise<ToolResult<T>>): Promise<ToolResult<T>> => {
      try {
        return await promise;
      } catch (error) {
        if (error instanceof SignedOut) {
          session.signOut("The server no longer accepts your token. Sign in again.");
          return { ok: false, error: { code: "forbidden", message: "signed out" } };
        }
        throw error;
      }
    },
    [session],
  );
  return {
    tool: <T>(name: ToolName, args: Record<string, unknown> = {}) => guard(session.baton.call<T>(name, args)),
    get: <T>(path: string) => guard(admin<T>(session.token, "GET", path)),
    send: <T>(method: "POST" | "PUT", path: string, body: unknown) =>
      guard(admin<T>(session.token, method, path, body)),
  };
}

/** What a load is doing. */
export type Loaded<T> =
  | { state: "loading" }
  | { state: "ok"; data: T }
  | { state: "error"; code: string; message: string; issues: string[] };

/** Runs `load` when `key` changes; `reload()` runs it again, keeping the old data on screen meanwhile. */
export function useLoad<T>(
  load: () => Promise<ToolResult<T>>,
  key: string,
): [Loaded<T>, () => Promise<void>] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" });
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    void load().then((r) => {
      if (!live) return;
      setLoaded(
        r.ok
          ? { state: "ok", data: r.data }
          : { state: "error", code: r.error.code, message: r.error.message, issues: r.error.issues ?? [] },
      );
    });
    return () => {
      live = false;
    };
  }, [key, version]);
  const reload = useCallback(async () => setVersion((v) => v + 1), []);
  return [loaded, reload];
}
