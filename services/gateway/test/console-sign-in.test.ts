import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayConfigSchema, gatewaySettings } from "../src/config.ts";
import { CONSOLE_CSP } from "../src/console.ts";
import { testGateway, testIssuer } from "./gateway-harness.ts";

/**
 * The web console's sign-in configuration (issue #16): what `GET /ui/config.json` tells the console,
 * the Content-Security-Policy that lets it reach the OIDC issuer's endpoints and nothing else, and
 * the gateway's configuration of both (`BATON_CONSOLE_*`), checked where an operator sets it.
 */

const PUBLIC_URL = "http://baton.test";

let dir: string;
let discovery: Server;
/** The issuer's origin (its discovery document), and another one serving its token endpoint. */
let issuer: string;
let tokenHost: string;
let discoveryReads = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "console-build-"));
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>Baton</title>");
  discovery = createServer((req, res) => {
    if (req.url !== "/realms/acme/.well-known/openid-configuration") {
      res.writeHead(404).end();
      return;
    }
    discoveryReads++;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        issuer: `${issuer}/realms/acme`,
        authorization_endpoint: `${issuer}/realms/acme/auth`,
        token_endpoint: `${tokenHost}/oauth/token`,
        userinfo_endpoint: `${issuer}/realms/acme/userinfo`,
        jwks_uri: `${issuer}/realms/acme/certs`,
        end_session_endpoint: "https://logout.example.com/end",
        revocation_endpoint: "javascript:alert(1)",
      }),
    );
  });
  await new Promise<void>((resolve) => discovery.listen(0, "127.0.0.1", resolve));
  const port = (discovery.address() as AddressInfo).port;
  issuer = `http://127.0.0.1:${port}`;
  // Another origin for the token endpoint (as Google's is): the same server, by another name.
  tokenHost = `http://localhost:${port}`;
});
afterAll(async () => {
  await new Promise((resolve) => discovery?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe("the console's sign-in configuration (issue #16)", () => {
  it("with the dev issuer: config.json says paste a token, and the CSP lets the console call this server only", async () => {
    const { verifier } = await testIssuer(PUBLIC_URL);
    const app = await testGateway({ publicUrl: PUBLIC_URL, verifier, consoleDir: dir });
    try {
      const config = await app.inject({ method: "GET", url: "/ui/config.json" });
      expect(config.statusCode).toBe(200);
      expect(JSON.parse(config.body)).toEqual({ signIn: "token" });
      expect(config.headers["content-security-policy"]).toBe(CONSOLE_CSP);
      const page = await app.inject({ method: "GET", url: "/ui/" });
      expect(page.headers["content-security-policy"]).toBe(CONSOLE_CSP);
      expect(CONSOLE_CSP).toContain("connect-src 'self';");
    } finally {
      await app.close();
    }
  });

  it("with an OIDC issuer and BATON_CONSOLE_CLIENT_ID: config.json names the client, and connect-src adds the issuer's fetched endpoints' origins only", async () => {
    const { verifier } = await testIssuer(PUBLIC_URL);
    const app = await testGateway({
      publicUrl: PUBLIC_URL,
      verifier,
      issuer: `${issuer}/realms/acme`,
      consoleDir: dir,
      consoleSignIn: { clientId: "baton-console", scope: "openid email", resourceParameter: "resource" },
    });
    try {
      const config = await app.inject({ method: "GET", url: "/ui/config.json" });
      expect(JSON.parse(config.body)).toEqual({
        signIn: "oidc",
        clientId: "baton-console",
        scope: "openid email",
        resourceParameter: "resource",
      });
      // The RFC 9728 metadata names the issuer the console signs in at.
      const metadata = await app.inject({ method: "GET", url: "/.well-known/oauth-protected-resource" });
      expect(JSON.parse(metadata.body).authorization_servers).toEqual([`${issuer}/realms/acme`]);

      const page = await app.inject({ method: "GET", url: "/ui/" });
      const csp = page.headers["content-security-policy"] as string;
      const directives = csp.split("; ");
      // The issuer's origin (discovery, userinfo) and the token endpoint's; not the end-session page
      // (a navigation, not a fetch), nor anything that is not an http(s) URL.
      expect(directives).toContain(`connect-src 'self' ${issuer} ${tokenHost}`);
      for (const strict of [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ])
        expect(directives).toContain(strict);
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|javascript:|logout\.example\.com/);
      // The document was read once and is kept.
      const reads = discoveryReads;
      await app.inject({ method: "GET", url: "/ui/" });
      expect(discoveryReads).toBe(reads);
    } finally {
      await app.close();
    }
  });

  it("an issuer whose discovery document cannot be read still gets its own origin in connect-src", async () => {
    const { verifier } = await testIssuer(PUBLIC_URL);
    const app = await testGateway({
      publicUrl: PUBLIC_URL,
      verifier,
      issuer: `${issuer}/realms/elsewhere`,
      consoleDir: dir,
      consoleSignIn: { clientId: "baton-console", scope: "openid", resourceParameter: "none" },
    });
    try {
      const page = await app.inject({ method: "GET", url: "/ui/" });
      expect(page.headers["content-security-policy"]).toContain(`connect-src 'self' ${issuer};`);
    } finally {
      await app.close();
    }
  });
});

describe("BATON_CONSOLE_* in the gateway's configuration (issue #16)", () => {
  const base = {
    NATS_URL: "nats://127.0.0.1:4222",
    BATON_SECRET: "console-sign-in-test-secret-0123456789",
    BATON_PUBLIC_URL: PUBLIC_URL,
    BATON_BLOB_DIR: "unused",
  };
  const oidc = {
    ...base,
    BATON_AUTH_ISSUER: "https://login.example.com/realms/acme",
    BATON_AUTH_JWKS_URL: "https://login.example.com/realms/acme/certs",
  };
  const problems = (env: Record<string, string>) => {
    const parsed = GatewayConfigSchema.safeParse(env);
    return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it("reads the console's client, scope and resource parameter, with defaults", async () => {
    const settings = await gatewaySettings(
      GatewayConfigSchema.parse({ ...oidc, BATON_CONSOLE_CLIENT_ID: "baton-console" }),
    );
    expect(settings.consoleSignIn).toEqual({
      clientId: "baton-console",
      scope: "openid profile email",
      resourceParameter: "resource",
    });
    const entra = await gatewaySettings(
      GatewayConfigSchema.parse({
        ...oidc,
        BATON_CONSOLE_CLIENT_ID: "9a3c1f7e",
        BATON_CONSOLE_SCOPE: "  openid   offline_access api://baton/access ",
        BATON_CONSOLE_RESOURCE_PARAMETER: "none",
      }),
    );
    expect(entra.consoleSignIn).toEqual({
      clientId: "9a3c1f7e",
      scope: "openid offline_access api://baton/access",
      resourceParameter: "none",
    });
    expect((await gatewaySettings(GatewayConfigSchema.parse(oidc))).consoleSignIn).toBeUndefined();
  });

  it("refuses a console client with the dev issuer, a scope without openid, and BATON_PERSON_CLIENTS leaving it out", () => {
    expect(
      problems({ ...base, BATON_DEV_ISSUER_FILE: "/tmp/dev-issuer.json", BATON_CONSOLE_CLIENT_ID: "c" }),
    ).toEqual([expect.stringMatching(/^BATON_CONSOLE_CLIENT_ID: the console signs in at an OIDC issuer/)]);
    expect(problems({ ...oidc, BATON_CONSOLE_CLIENT_ID: "c", BATON_CONSOLE_SCOPE: "email" })).toEqual([
      "BATON_CONSOLE_SCOPE: include openid (the console signs people in with OIDC)",
    ]);
    expect(problems({ ...oidc, BATON_CONSOLE_CLIENT_ID: "c", BATON_PERSON_CLIENTS: "chat-ui" })).toEqual([
      expect.stringMatching(/^BATON_PERSON_CLIENTS: add BATON_CONSOLE_CLIENT_ID/),
    ]);
    expect(problems({ ...oidc, BATON_CONSOLE_CLIENT_ID: "c", BATON_PERSON_CLIENTS: "chat-ui,c" })).toEqual(
      [],
    );
    expect(problems({ ...oidc, BATON_CONSOLE_RESOURCE_PARAMETER: "scope" })).toEqual([
      expect.stringMatching(/^BATON_CONSOLE_RESOURCE_PARAMETER: /),
    ]);
  });
});
