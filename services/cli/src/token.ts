import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadOrCreateDevIssuer, mintDevToken, type TokenClaims } from "@baton/auth";

/** What `baton dev` writes to `<data-dir>/server.json` so other commands find the server. */
export interface ServerInfo {
  url: string;
  publicUrl: string;
  pid: number;
  clock: "real" | "manual";
}

/** The default organization of `baton dev` and `baton token`. */
export const DEFAULT_ORG = "default";

/** The default port of `baton dev`. */
export const DEFAULT_PORT = 7800;

/** The MCP URL of the server using `dataDir`, from its `server.json`, else the default port's. */
export function serverUrl(dataDir: string): string {
  const file = join(resolve(dataDir), "server.json");
  if (existsSync(file)) return (JSON.parse(readFileSync(file, "utf8")) as ServerInfo).url;
  return `http://127.0.0.1:${DEFAULT_PORT}/mcp`;
}

/** The MCP resource URL for an `--url` that may be the base URL or the `/mcp` endpoint. */
export function mcpUrl(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return trimmed.endsWith("/mcp") ? trimmed : `${trimmed}/mcp`;
}

/** The dev issuer's key file of a data directory: `<dataDir>/dev-issuer.json`. */
export function devIssuerFile(dataDir: string): string {
  return join(resolve(dataDir), "dev-issuer.json");
}

/**
 * Throws, saying what `--data-dir` must point at, unless `dataDir` holds the dev issuer's key file.
 * `baton token` and the admin commands call it before minting: a new key made here would sign tokens
 * no server trusts (issue #13, what an SRE trial found).
 */
export function requireDevIssuer(dataDir: string): void {
  const file = devIssuerFile(dataDir);
  if (existsSync(file)) return;
  throw new Error(
    `--data-dir ${dataDir}: ${file} does not exist. --data-dir must be the folder holding the key of the dev issuer the server trusts: ` +
      "baton dev's --data-dir (default ./.baton; the key is made when it first starts), or, for baton serve gateway, " +
      "the folder of its BATON_DEV_ISSUER_FILE, a file named dev-issuer.json. A gateway with BATON_AUTH_ISSUER takes tokens " +
      "from that identity provider instead; pass one with --token or BATON_TOKEN.",
  );
}

/**
 * `baton token …`: a bearer token signed by the dev issuer of `dataDir`, for the MCP resource `url`
 * (the token's `aud`). Valid 30 days.
 */
export async function devToken(dataDir: string, claims: TokenClaims, url?: string): Promise<string> {
  const issuer = await loadOrCreateDevIssuer(devIssuerFile(dataDir));
  return mintDevToken(issuer, claims, mcpUrl(url ?? serverUrl(dataDir)));
}

/**
 * The web console's sign-in link for a token (issue #16): `<base>/ui/#token=<token>`, where `base` is
 * the server's public URL (its MCP endpoint without `/mcp`).
 */
export function consoleLink(mcpEndpoint: string, token: string): string {
  return `${mcpUrl(mcpEndpoint).replace(/\/mcp$/, "")}/ui/#token=${token}`;
}
