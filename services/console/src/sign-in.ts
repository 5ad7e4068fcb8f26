// How people sign in (issue #16): a pasted bearer token (the dev issuer), or OIDC at the issuer the server names.
import type { ConsoleConfig } from "@baton/protocol";
import type { User, UserManager } from "oidc-client-ts";

/**
 * How this server signs people in, from `/ui/config.json` (the gateway's `BATON_CONSOLE_*`) and the
 * RFC 9728 metadata at `/.well-known/oauth-protected-resource` (`authorization_servers[0]` is the
 * issuer, `resource` the MCP resource a token must be for).
 *
 * - `token`: paste a bearer token. `issuer` is the one the server trusts (the dev issuer, or an OIDC
 *   issuer without a console client).
 * - `oidc`: the authorization code flow with PKCE at `issuer` through `manager` (oidc-client-ts).
 */
export type SignInSetup =
  | { method: "token"; issuer: string | null }
  | { method: "oidc"; issuer: string; manager: UserManager };

/** The dev issuer's `iss` (`@baton/auth` `DEV_ISSUER`): its tokens come from `baton token`. */
export const DEV_ISSUER = "urn:baton:dev-issuer";

/** The RFC 9728 protected-resource metadata, as far as the console reads it. */
interface ResourceMetadata {
  resource?: unknown;
  authorization_servers?: unknown;
}

async function json<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`${path} answered ${response.status}`);
  return (await response.json()) as T;
}

/**
 * Reads how to sign in (see {@link SignInSetup}). Throws when the server cannot be reached. The
 * OIDC client keeps everything in this tab's `sessionStorage` (the PKCE verifier and state while
 * the issuer's pages are shown, then the tokens), never in `localStorage` or a cookie.
 */
export async function loadSignInSetup(): Promise<SignInSetup> {
  const [config, metadata] = await Promise.all([
    json<ConsoleConfig>("/ui/config.json"),
    json<ResourceMetadata>("/.well-known/oauth-protected-resource"),
  ]);
  const servers = Array.isArray(metadata.authorization_servers) ? metadata.authorization_servers : [];
  const issuer = typeof servers[0] === "string" ? servers[0] : null;
  if (config.signIn !== "oidc" || issuer === null || issuer === DEV_ISSUER)
    return { method: "token", issuer };
  // Loaded only where people sign in with OIDC, as its own chunk.
  const { UserManager, WebStorageStateStore } = await import("oidc-client-ts");
  const resource = typeof metadata.resource === "string" ? metadata.resource : `${location.origin}/mcp`;
  // The console's own address: the redirect URI registered at the issuer.
  const home = `${location.origin}/ui/`;
  const store = new WebStorageStateStore({ store: window.sessionStorage });
  const manager = new UserManager({
    authority: issuer,
    client_id: config.clientId,
    redirect_uri: home,
    post_logout_redirect_uri: home,
    response_type: "code",
    response_mode: "query",
    scope: config.scope,
    // RFC 8707: the token is for this server's MCP resource (sent again when the code and any
    // refresh token are exchanged); Auth0 calls it audience; Entra ID names the API by its scope.
    ...(config.resourceParameter === "resource"
      ? { resource, extraTokenParams: { resource } }
      : config.resourceParameter === "audience"
        ? { extraQueryParams: { audience: resource } }
        : {}),
    userStore: store,
    stateStore: store,
    // Who the person is comes from the server (GET /api/whoami), not from userinfo.
    loadUserInfo: false,
    // Both need an iframe of the issuer, which the console's Content-Security-Policy forbids:
    // renewal uses a refresh token when the issuer gives one, else the person signs in again.
    automaticSilentRenew: false,
    monitorSession: false,
  });
  return { method: "oidc", issuer, manager };
}

/** What the address says after the issuer sent the person back: a code to exchange, an error, or nothing. */
export function redirectResult(url: URL): "code" | "error" | null {
  if (url.searchParams.has("state") && url.searchParams.has("code")) return "code";
  if (url.searchParams.has("error")) return "error";
  return null;
}

/**
 * Completes a sign-in when the issuer just sent the person back to `/ui/?code=…&state=…` (or
 * `?error=…`): exchanges the code (with the PKCE verifier) for tokens, then clears the query from
 * the address bar and history and returns to the page the person was on. Returns the signed-in
 * user, null when the address holds no answer from the issuer; throws the issuer's refusal
 * (`error_description`) or a failed exchange.
 */
export async function finishRedirect(manager: UserManager): Promise<User | null> {
  const url = new URL(location.href);
  const result = redirectResult(url);
  if (result === null) return null;
  const clear = (hash: string) => history.replaceState(null, "", `${location.pathname}${hash || "#/"}`);
  try {
    const user = await manager.signinRedirectCallback(url.href);
    clear(typeof user.url_state === "string" && user.url_state.startsWith("#/") ? user.url_state : "#/");
    return user;
  } catch (error) {
    clear("#/");
    throw error;
  }
}

/** The issuer's name for people: its host, e.g. `login.example.com` (an issuer without one, as written). */
export function issuerName(issuer: string): string {
  try {
    return new URL(issuer).host || issuer;
  } catch {
    return issuer;
  }
}
