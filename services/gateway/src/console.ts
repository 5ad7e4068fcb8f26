// Serves the web console's built files at /ui/ (issue #16), by path: the gateway imports no console code.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "@baton/kit";
import { type ConsoleConfig, RESOURCE_PARAMETERS, type ResourceParameter } from "@baton/protocol";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";
import { z } from "zod";

/** Where the console's build is in this repository (`services/console/dist`), the default `BATON_CONSOLE_DIR`. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL("../../console/dist/", import.meta.url));

/**
 * The console's Content-Security-Policy: its own scripts, styles, images and API calls only, plus
 * requests to `connectSources` (origins such as `https://login.example.com`: the OIDC issuer's
 * discovery, token and userinfo endpoints, for sign-in). No inline script or style, no eval, no
 * frames, no plugins, no form posts, no `<base>`.
 */
export function consoleCsp(connectSources: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    ["connect-src 'self'", ...connectSources].join(" "),
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** {@link consoleCsp} without any other host: the dev issuer's console. */
export const CONSOLE_CSP = consoleCsp();

/** The console's OIDC sign-in (issue #16): its public client at the gateway's issuer (`BATON_CONSOLE_*`). */
export interface ConsoleSignIn {
  /** The OAuth client id the console signs in as (a public client: PKCE, no secret). */
  clientId: string;
  /** The scopes it asks for, space-separated. */
  scope: string;
  /** How its authorization request names this server's MCP resource. */
  resourceParameter: ResourceParameter;
}

/** The console's sign-in variables (issue #16), as zod fields for the gateway's config (and `baton dev`'s). */
export const CONSOLE_ENV = {
  BATON_CONSOLE_CLIENT_ID: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The web console's OAuth client id at BATON_AUTH_ISSUER: a public client (no secret) with the authorization code flow and PKCE, redirect URI <BATON_PUBLIC_URL>/ui/. Set, people sign in to the console at the issuer; unset, they paste a bearer token. Add it to BATON_PERSON_CLIENTS when that is set.",
    ),
  BATON_CONSOLE_SCOPE: z
    .string()
    .trim()
    .min(1)
    .default("openid profile email")
    .describe(
      "Scopes the console asks for, space-separated; openid is required. Add offline_access where the provider then issues a refresh token (Entra ID, Auth0), so the console renews the access token without a new sign-in; with Entra ID add the API's scope (api://<app>/<scope>).",
    ),
  BATON_CONSOLE_RESOURCE_PARAMETER: z
    .enum(RESOURCE_PARAMETERS)
    .default("resource")
    .describe(
      "How the console's authorization request names this server's MCP resource (<BATON_PUBLIC_URL>/mcp), the token's audience: resource (RFC 8707: Keycloak, Okta, most providers), audience (Auth0: the API's identifier), none (Entra ID v2, whose scope names the API and refuses a resource parameter).",
    ),
} as const;

/** The parsed values of {@link CONSOLE_ENV}. */
export type ConsoleEnv = z.infer<z.ZodObject<typeof CONSOLE_ENV>>;

/**
 * The problems of the console's variables with the rest of a config, for its `superRefine`: a console
 * client with the dev issuer (there is no issuer to sign in at), a scope without `openid`, and a
 * `BATON_PERSON_CLIENTS` that leaves the console's client out (every person signing in would be refused).
 */
export function consoleEnvProblems(
  env: ConsoleEnv & {
    BATON_DEV_ISSUER_FILE?: string | undefined;
    BATON_PERSON_CLIENTS?: string[] | undefined;
  },
): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  if (env.BATON_CONSOLE_CLIENT_ID === undefined) return problems;
  if (env.BATON_DEV_ISSUER_FILE)
    problems.push({
      path: "BATON_CONSOLE_CLIENT_ID",
      message:
        "the console signs in at an OIDC issuer (BATON_AUTH_ISSUER); with the dev issuer people paste a token, so leave it unset",
    });
  if (!env.BATON_CONSOLE_SCOPE.split(/\s+/).includes("openid"))
    problems.push({
      path: "BATON_CONSOLE_SCOPE",
      message: "include openid (the console signs people in with OIDC)",
    });
  if (env.BATON_PERSON_CLIENTS && !env.BATON_PERSON_CLIENTS.includes(env.BATON_CONSOLE_CLIENT_ID))
    problems.push({
      path: "BATON_PERSON_CLIENTS",
      message:
        "add BATON_CONSOLE_CLIENT_ID: a person's token is accepted only from the clients listed, so nobody could sign in to the console",
    });
  return problems;
}

/** The console's sign-in the variables describe, or undefined without a console client. */
export function consoleSignInFromEnv(env: ConsoleEnv): ConsoleSignIn | undefined {
  if (env.BATON_CONSOLE_CLIENT_ID === undefined) return undefined;
  return {
    clientId: env.BATON_CONSOLE_CLIENT_ID,
    scope: env.BATON_CONSOLE_SCOPE.split(/\s+/).join(" "),
    resourceParameter: env.BATON_CONSOLE_RESOURCE_PARAMETER,
  };
}

/** What {@link registerConsole} serves. */
export interface ConsoleOptions {
  /** The build folder. */
  dir: string;
  /** With an OIDC issuer and a console client: how people sign in, and the issuer (`iss`). */
  signIn?: (ConsoleSignIn & { issuer: string }) | undefined;
  log: Logger;
  /** For the issuer's discovery document (default: the global `fetch`). */
  fetch?: typeof fetch;
}

/** How long a read discovery document's endpoints are kept, and how long after a failed read the next one is tried, ms. */
const DISCOVERY_KEEP_MS = 3_600_000;
const DISCOVERY_RETRY_MS = 30_000;
const DISCOVERY_TIMEOUT_MS = 3_000;

/** The discovery document's fields naming endpoints the console calls with `fetch` (oidc-client-ts). */
const FETCHED_ENDPOINTS = ["token_endpoint", "userinfo_endpoint", "revocation_endpoint"] as const;

/** The origin of an http(s) URL, or null. A URL's origin holds no space or `;`, so it is safe in a CSP. */
function originOf(url: unknown): string | null {
  if (typeof url !== "string") return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.origin : null;
  } catch {
    return null;
  }
}

/**
 * The origins the console's sign-in calls at `issuer`: the issuer's own (its discovery document) and
 * those of the token, userinfo and revocation endpoints its discovery document names (a provider
 * may serve them from another host). The document is read when first needed, kept an hour, and read
 * again at most every 30 s while it cannot be: meanwhile the issuer's origin alone is allowed (the
 * console then says the issuer could not be reached, and a reload tries again).
 */
export function issuerConnectSources(
  issuer: string,
  log: Logger,
  fetchImpl: typeof fetch = fetch,
): () => Promise<string[]> {
  const own = originOf(issuer);
  const base = own ? [own] : [];
  let known: { origins: string[]; until: number } | null = null;
  let reading: Promise<string[]> | null = null;
  const read = async (): Promise<string[]> => {
    const url = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    try {
      const response = await fetchImpl(url, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
      if (!response.ok) throw new Error(`it answered ${response.status}`);
      const document = (await response.json()) as Record<string, unknown>;
      const origins = new Set(base);
      for (const field of FETCHED_ENDPOINTS) {
        const origin = originOf(document[field]);
        if (origin) origins.add(origin);
      }
      known = { origins: [...origins], until: Date.now() + DISCOVERY_KEEP_MS };
    } catch (error) {
      log.warn(
        { issuer, err: String(error) },
        "the OIDC issuer's discovery document could not be read; the console may call its origin only",
      );
      known = { origins: base, until: Date.now() + DISCOVERY_RETRY_MS };
    }
    return known.origins;
  };
  return async () => {
    if (known && known.until > Date.now()) return known.origins;
    reading ??= read().finally(() => {
      reading = null;
    });
    return reading;
  };
}

const HEADERS: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "X-Frame-Options": "DENY",
};

/**
 * Registers `GET /ui/…`: the files of `dir` (a Vite build), `index.html` for `/ui/`, and
 * `/ui/config.json`, how people sign in ({@link ConsoleConfig}); every answer with the console's
 * Content-Security-Policy ({@link consoleCsp}, the issuer's endpoints allowed when people sign in
 * with OIDC). Hashed assets are cached for a year; `index.html` is revalidated each time, so a new
 * build is picked up without a restart. When `dir` holds no build, `/ui/` answers 503 saying how to
 * build one. `/ui` redirects to `/ui/`.
 */
export async function registerConsole(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const { dir, signIn } = options;
  const index = join(dir, "index.html");
  const config: ConsoleConfig = signIn
    ? {
        signIn: "oidc",
        clientId: signIn.clientId,
        scope: signIn.scope,
        resourceParameter: signIn.resourceParameter,
      }
    : { signIn: "token" };
  const connectSources = signIn
    ? issuerConnectSources(signIn.issuer, options.log, options.fetch)
    : async () => [];
  await app.register(async (scope) => {
    scope.addHook("onRequest", async (_request, reply) => {
      reply.headers(HEADERS);
      reply.header("Content-Security-Policy", consoleCsp(await connectSources()));
      if (!existsSync(index)) {
        return reply
          .code(503)
          .type("text/plain; charset=utf-8")
          .send(
            "The web console is not built. Run `pnpm install` (it builds it) or `pnpm --filter @baton/console build`, then reload.\n",
          );
      }
    });
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: "/ui/",
      decorateReply: false,
      index: ["index.html"],
      dotfiles: "deny",
      cacheControl: false,
      setHeaders(reply, path) {
        // Vite names every asset by its content hash; index.html names the current ones.
        reply.header(
          "Cache-Control",
          /[\\/]assets[\\/]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache",
        );
      },
    });
    scope.get("/ui", async (_request, reply) => reply.redirect("/ui/", 301));
    // Configuration, not a file: read by the console before it shows a sign-in.
    scope.get("/ui/config.json", async (_request, reply) =>
      reply.header("Cache-Control", "no-cache").send(config),
    );
  });
}
