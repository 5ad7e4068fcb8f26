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

/**
 * `baton token …`: a bearer token signed by the dev issuer of `dataDir`, for the MCP resource `url`
 * (the token's `aud`). Valid 30 days.
 */
export async function devToken(dataDir: string, claims: TokenClaims, url?: string): Promise<string> {
  const issuer = await loadOrCreateDevIssuer(join(resolve(dataDir), "dev-issuer.json"));
  return mintDevToken(issuer, claims, mcpUrl(url ?? serverUrl(dataDir)));
}

/**
 * The web console's sign-in link for a token (issue #16): `<base>/ui/#token=<token>`, where `base` is
 * the server's public URL (its MCP endpoint without `/mcp`).
 */
export function consoleLink(mcpEndpoint: string, token: string): string {
  return `${mcpUrl(mcpEndpoint).replace(/\/mcp$/, "")}/ui/#token=${token}`;
}
