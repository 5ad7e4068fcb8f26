// Who is signed in: the bearer token, kept in this tab only; nothing is kept on the server.

/** The identity claims Baton reads from a token (ARCHITECTURE "Identity"), shown, never trusted: the server checks. */
export interface Claims {
  sub: string;
  org: string;
  kind: "agent" | "person";
  groups: string[];
  roles: string[];
  /** Expiry, epoch seconds. */
  exp: number | null;
}

const KEY = "baton.console.token";

function base64UrlDecode(part: string): string {
  const base64 = part.replace(/-/g, "+").replace(/_/g, "/");
  const bytes = Uint8Array.from(atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4)), (c) =>
    c.charCodeAt(0),
  );
  return new TextDecoder().decode(bytes);
}

/** The claims of a JWT, or null when it is not one. The signature is the server's business. */
export function readClaims(token: string): Claims | null {
  const payload = token.split(".")[1];
  if (!payload) return null;
  try {
    const c = JSON.parse(base64UrlDecode(payload)) as Record<string, unknown>;
    const strings = (v: unknown) =>
      Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
    return {
      sub: typeof c.sub === "string" ? c.sub : "",
      org: typeof c.org === "string" ? c.org : "",
      kind: c.kind === "agent" ? "agent" : "person",
      groups: strings(c.groups),
      roles: strings(c.roles),
      exp: typeof c.exp === "number" ? c.exp : null,
    };
  } catch {
    return null;
  }
}

/**
 * A token handed over in the address's fragment (`/ui/#token=<token>`, from `baton token person …
 * --console`): returns it and clears the fragment from the address bar and history at once, so it is
 * neither shown nor kept. The fragment never reaches the server.
 */
export function takeTokenFromFragment(): string | null {
  const match = /^#token=([^&]+)/.exec(window.location.hash);
  if (!match) return null;
  history.replaceState(null, "", `${window.location.pathname}${window.location.search}#/`);
  return decodeURIComponent(match[1] as string).trim();
}

/** The token of this tab's sign-in, if any. */
export function loadToken(): string | null {
  return sessionStorage.getItem(KEY);
}

/** Keeps the token for this tab (it goes when the tab closes). */
export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

/** Forgets the token. */
export function clearToken(): void {
  sessionStorage.removeItem(KEY);
}
