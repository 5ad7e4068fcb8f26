import { mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { McpSession } from "@baton/conformance/mcp";
import { exportJWK, generateKeyPair } from "jose";
import Provider, { errors, type KoaContextWithOIDC } from "oidc-provider";
import type { Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AxeViolation, seriousViolations, startBrowser, type TestBrowser } from "../support/browser.ts";
import { type Deployment, startEmbedded } from "../support/deploy.ts";
import { expenseAtApproval as expenseRun } from "../support/expense.ts";

const WAIT = 30_000;
/** Set to a folder to keep a screenshot of each console page checked (docs/console.md's images). */
const SHOTS = process.env.BATON_CONSOLE_SCREENSHOTS;

/** The test's people and agent at the authorization server, and what its tokens say of them. */
const CONSOLE_CLIENT = "baton-console";
const AGENT_CLIENT = "expense-checker";
const AGENT_SECRET = "expense-checker-secret-0123456789abcdef";
const MIA = {
  login: "mia",
  email: "mia@example.com",
  groups: ["manager", "finance"],
  appRoles: ["baton-operator"],
};
/** Another manager, whose sign-in gets no refresh token and access tokens that expire at once. */
const OLA = { login: "ola", email: "ola@example.com", groups: ["manager"] };
/** Lifetime of the access tokens, seconds: 60 s before it ends the console renews (oidc-client-ts' default), here ~10 s in. */
const ACCESS_TOKEN_SECONDS = 70;
/** Lifetime of Ola's access tokens, seconds. */
const SHORT_TOKEN_SECONDS = 5;

/**
 * The web console's OIDC sign-in (issue #16), end to end: a real authorization server (panva's
 * `oidc-provider`, in this process: discovery, JWKS, authorize with PKCE, its own login and consent
 * pages, token, refresh, end session), `baton dev` trusting it (BATON_AUTH_ISSUER, a claim mapping
 * that is not the default one: issue #12) with the console's client (BATON_CONSOLE_CLIENT_ID), and
 * Debian's Chromium driven by playwright-core. A person signs in through the provider's pages, lands
 * in the inbox, reads who the server takes them to be, approves a work item, is renewed by refresh
 * token, and signs out at the provider. The agent works with a client-credentials token of the same
 * provider. Every console page is checked by axe-core, the console's own pages must raise no
 * Content-Security-Policy violation, and nothing but Baton and the provider is requested.
 */
describe("web console: sign-in at an OIDC provider (issue #16) in Chromium against baton dev", () => {
  let issuerServer: Server;
  let issuer: string;
  let provider: Provider;
  let baton: Deployment;
  let base: string;
  let resource: string;
  let browser: TestBrowser;
  let agent: McpSession;
  const offsite: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    // The provider's address first (baton dev must know it), its configuration once Baton's is known.
    let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
      res.writeHead(503).end();
    };
    issuerServer = createServer((req, res) => handle(req, res));
    await new Promise<void>((resolve) => issuerServer.listen(0, "127.0.0.1", resolve));
    issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;

    baton = await startEmbedded({
      env: {
        BATON_AUTH_ISSUER: issuer,
        BATON_AUTH_JWKS_URL: `${issuer}/jwks`,
        // The provider's claims, mapped (issue #12): organization in `tenant`, a person is whoever
        // has an email (a client-credentials token has none), the operator role among `app_roles`,
        // and a person's token accepted from the console's client only (§6 rule 4).
        BATON_AUTH_ORG_CLAIM: "tenant",
        BATON_AUTH_KIND: "email",
        BATON_AUTH_PERSON_ID_CLAIMS: "email",
        BATON_AUTH_AGENT_ID_CLAIM: "client_id",
        BATON_AUTH_GROUPS_CLAIMS: "groups",
        BATON_AUTH_OPERATOR_CLAIMS: "app_roles",
        BATON_AUTH_OPERATOR_ROLE: "baton-operator",
        BATON_PERSON_CLIENTS: CONSOLE_CLIENT,
        BATON_CONSOLE_CLIENT_ID: CONSOLE_CLIENT,
        BATON_CONSOLE_SCOPE: "openid email",
      },
    });
    resource = baton.url;
    base = resource.replace(/\/mcp$/, "");

    const { privateKey } = await generateKeyPair("RS256", { extractable: true });
    provider = new Provider(issuer, {
      clients: [
        {
          // The console: a public client (no secret), the code flow with PKCE, back to <base>/ui/.
          client_id: CONSOLE_CLIENT,
          token_endpoint_auth_method: "none",
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          redirect_uris: [`${base}/ui/`],
          post_logout_redirect_uris: [`${base}/ui/`],
        },
        {
          client_id: AGENT_CLIENT,
          client_secret: AGENT_SECRET,
          grant_types: ["client_credentials"],
          response_types: [],
          redirect_uris: [],
        },
      ],
      jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "test-rs256", alg: "RS256", use: "sig" }] },
      cookies: { keys: ["console-oidc-test-cookie-key-0123456789"] },
      // Said, so the provider does not warn of its defaults; seconds.
      ttl: {
        AccessToken: (_ctx, token) =>
          token.accountId === OLA.login ? SHORT_TOKEN_SECONDS : ACCESS_TOKEN_SECONDS,
        AuthorizationCode: 60,
        ClientCredentials: 600,
        Grant: 3600,
        IdToken: 3600,
        Interaction: 600,
        RefreshToken: 3600,
        Session: 3600,
      },
      // A refresh token with every code, as Keycloak gives one (this provider, by OIDC Core's letter,
      // would otherwise want offline_access asked for with prompt=consent).
      // Ola gets none: the console must have her sign in again when her token expires.
      issueRefreshToken: async (_ctx, client, code) =>
        client.grantTypeAllowed("refresh_token") && code.accountId !== OLA.login,
      // The console calls the token endpoint from its own origin (CORS), and nothing else does.
      clientBasedCORS: (_ctx, origin, client) => client.clientId === CONSOLE_CLIENT && origin === base,
      findAccount: async (_ctx, id) => ({
        accountId: id,
        claims: async () => ({ sub: id, email: `${id}@example.com`, email_verified: true }),
      }),
      claims: { openid: ["sub"], email: ["email", "email_verified"] },
      // What Baton reads (the claim mapping above): in every access token, the person's or the agent's.
      extraTokenClaims: async (_ctx, token) => {
        const accountId = "accountId" in token ? token.accountId : undefined;
        if (accountId === undefined) return { tenant: "default" };
        return accountId === MIA.login
          ? {
              tenant: "default",
              email: MIA.email,
              email_verified: true,
              groups: MIA.groups,
              app_roles: MIA.appRoles,
            }
          : accountId === OLA.login
            ? { tenant: "default", email: OLA.email, email_verified: true, groups: OLA.groups, app_roles: [] }
            : { tenant: "default", email: `${accountId}@example.com`, email_verified: true, groups: [] };
      },
      features: {
        devInteractions: { enabled: true },
        clientCredentials: { enabled: true },
        rpInitiatedLogout: { enabled: true },
        // RFC 8707: access tokens for Baton's MCP resource are JWTs whose audience it is.
        resourceIndicators: {
          enabled: true,
          defaultResource: async () => resource,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx: KoaContextWithOIDC, indicator: string) => {
            if (indicator !== resource) throw new errors.InvalidTarget();
            return {
              scope: "",
              audience: resource,
              accessTokenFormat: "jwt",
              jwt: { sign: { alg: "RS256" } },
            };
          },
        },
      },
    });
    const callback = provider.callback();
    handle = (req, res) => void callback(req, res);

    // The agent's token: client credentials at the same provider.
    const tokenResponse = await fetch(`${issuer}/token`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${AGENT_CLIENT}:${AGENT_SECRET}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ grant_type: "client_credentials", resource }),
    });
    const { access_token } = (await tokenResponse.json()) as { access_token: string };
    agent = await McpSession.connect(resource, access_token, "agent");

    browser = await startBrowser();
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    // Only Baton and the provider: anything else (the provider's own pages ask for a web font) is
    // refused and kept, and the console's pages must ask for none.
    await browser.context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(`${base}/`) || url.startsWith(`${issuer}/`)) return route.continue();
      offsite.push(`${url} from ${frameUrl(route.request())}`);
      return route.abort();
    });
  });
  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    await baton?.stop();
    await new Promise((resolve) => issuerServer?.close(resolve));
  });

  function frameUrl(request: Request): string {
    try {
      return request.frame().url();
    } catch {
      return "(no frame)";
    }
  }

  async function tab(): Promise<Page> {
    const page = await browser.page();
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (page.url().startsWith(`${base}/`) && /Content[- ]Security[- ]Policy|Refused to/i.test(m.text()))
        problems.push(`csp: ${m.text()}`);
    });
    return page;
  }

  async function audit(page: Page, name: string): Promise<void> {
    const violations: AxeViolation[] = await seriousViolations(page);
    expect(violations, `axe-core on ${name}`).toEqual([]);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name.replace(/\W+/g, "-")}.png`) });
  }

  async function heading(page: Page, name: string | RegExp) {
    await page.getByRole("heading", { level: 1, name }).waitFor({ timeout: WAIT });
  }

  /** An expense-approval test run at the manager's approval: the agent starts it and does its step. */
  const expenseAtApproval = () => expenseRun(agent, agent);

  it("serves the console's OIDC configuration, with the provider's endpoints in connect-src and nothing inline", async () => {
    expect(await (await fetch(`${base}/ui/config.json`)).json()).toEqual({
      signIn: "oidc",
      clientId: CONSOLE_CLIENT,
      scope: "openid email",
      resourceParameter: "resource",
    });
    const metadata = (await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()) as {
      authorization_servers: string[];
      resource: string;
    };
    expect(metadata).toMatchObject({ authorization_servers: [issuer], resource });
    const page = await fetch(`${base}/ui/`);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp.split("; ")).toContain(`connect-src 'self' ${issuer}`);
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  });

  it("a manager signs in through the provider's login and consent pages, lands in the inbox, sees who the server takes them to be, approves, is renewed, and signs out", async () => {
    const runId = await expenseAtApproval();
    const page = await tab();
    // A deep link: the person comes back to it after signing in.
    await page.goto(`${base}/ui/#/me`);
    await heading(page, "Sign in to Baton");
    const host = new URL(issuer).host;
    const signIn = page.getByRole("button", { name: `Sign in with ${host}` });
    await signIn.waitFor({ timeout: WAIT });
    await audit(page, "sign-in (OIDC)");
    await signIn.click();

    // The provider's own pages: login, then consent to the scopes asked for.
    await page.waitForURL((url) => url.href.startsWith(`${issuer}/`), { timeout: WAIT });
    await page.locator('input[name="login"]').fill(MIA.login);
    await page.locator('input[name="password"]').fill("any password");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click({ timeout: WAIT });

    // Back at the console, the code exchanged (PKCE), the query cleared, on the page the person asked for.
    await heading(page, "Who am I");
    expect(page.url()).toBe(`${base}/ui/#/me`);
    const facts = page.getByRole("definition");
    await page.getByText(MIA.email, { exact: true }).first().waitFor({ timeout: WAIT });
    const identity = page.locator('dl[aria-label="Your identity"]');
    await identity.waitFor({ timeout: WAIT });
    const text = (await identity.textContent()) ?? "";
    expect(text).toContain(MIA.email);
    expect(text).toContain("default");
    expect(text).toContain("person");
    expect(
      await page.getByRole("list", { name: "Your groups" }).getByRole("listitem").allTextContents(),
    ).toEqual(MIA.groups);
    expect(
      await page.getByRole("list", { name: "Your roles" }).getByRole("listitem").allTextContents(),
    ).toEqual(["operator"]);
    expect(text).toContain(`at ${host}`);
    expect(text).toContain(CONSOLE_CLIENT);
    expect(await facts.count()).toBeGreaterThanOrEqual(7);
    const firstExpiry = await page.locator('dl[aria-label="Your identity"] time').getAttribute("datetime");
    expect(Date.parse(firstExpiry ?? "")).toBeGreaterThan(Date.now());
    await audit(page, "who am I (OIDC)");
    // The tokens stay in this tab (sessionStorage), nowhere longer-lived.
    expect(await page.evaluate("localStorage.length")).toBe(0);

    // The inbox, by the header's navigation; the operators' page is there (the mapped role).
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Inbox" }).click();
    await heading(page, "Inbox");
    await nav.getByRole("link", { name: "Operators" }).waitFor({ timeout: WAIT });
    const card = page.locator("li.inbox-item", { hasText: runId });
    await card.waitFor({ timeout: WAIT });
    await audit(page, "inbox (OIDC)");
    await card.locator("h2 a").click();
    await heading(page, "Approval: Approve");
    await page.getByRole("button", { name: "Approve" }).click();
    await heading(page, "Decided: approved");
    const view = await agent.ok("get_run", { runId });
    expect(view.run).toMatchObject({ state: "ended", outcome: "approved" });
    // The journal names the person as the server read them, not the provider's subject.
    // (A string: it runs in the page, and this file has no DOM types.)
    const journal = (await page.evaluate(`(async () => {
      const key = Object.keys(sessionStorage).find((k) => k.startsWith("oidc.user:"));
      const token = JSON.parse(sessionStorage.getItem(key)).access_token;
      const response = await fetch("/api/runs/${runId}/journal", { headers: { authorization: "Bearer " + token } });
      return response.json();
    })()`)) as { data: { entries: { actor: string; command: string }[] } };
    expect(journal.data.entries.find((e) => e.command === "decide")?.actor).toBe(MIA.email);

    // Renewed before it expires, by the refresh token (no iframe, no new sign-in): Who am I shows the
    // new token's expiry.
    await page.locator(`a[href="#/me"]`).click();
    await heading(page, "Who am I");
    await expect
      .poll(() => page.locator('dl[aria-label="Your identity"] time').getAttribute("datetime"), {
        timeout: WAIT,
        interval: 500,
      })
      .not.toBe(firstExpiry);
    await heading(page, "Who am I");

    // Sign out: at the provider too, which sends the person back to the console's sign-in.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL((url) => url.href.startsWith(`${issuer}/`), { timeout: WAIT });
    await page.getByRole("button", { name: "Yes, sign me out" }).click();
    await page.waitForURL((url) => url.href.startsWith(`${base}/ui/`), { timeout: WAIT });
    await page.getByRole("button", { name: `Sign in with ${host}` }).waitFor({ timeout: WAIT });
    expect(
      await page.evaluate("Object.keys(sessionStorage).filter((k) => k.startsWith('oidc.user:')).length"),
    ).toBe(0);
    await page.close();
  });

  it("without a refresh token, a person whose access token expires is told to sign in again, and comes back to the page they were on", async () => {
    const page = await tab();
    await page.goto(`${base}/ui/#/runs`);
    const host = new URL(issuer).host;
    await page.getByRole("button", { name: `Sign in with ${host}` }).click({ timeout: WAIT });
    await page.waitForURL((url) => url.href.startsWith(`${issuer}/`), { timeout: WAIT });
    await page.locator('input[name="login"]').fill(OLA.login);
    await page.locator('input[name="password"]').fill("any password");
    await page.getByRole("button", { name: "Sign-in" }).click();
    await page.getByRole("button", { name: "Continue" }).click({ timeout: WAIT });
    await heading(page, "Runs");
    await page.getByRole("link", { name: OLA.email }).waitFor({ timeout: WAIT });
    // Her token expires (no refresh token to renew it): the sign-in page says so.
    await page
      .getByText(`Your sign-in at ${host} has expired. Sign in again to carry on.`)
      .waitFor({ timeout: WAIT });
    await heading(page, "Sign in to Baton");
    await audit(page, "sign-in (expired)");
    // Signed in again (the provider still knows her: no login page), back on the page she was on.
    await page.getByRole("button", { name: `Sign in with ${host}` }).click();
    await heading(page, "Runs");
    expect(page.url()).toBe(`${base}/ui/#/runs`);
    await page.close();
  });

  it("the sign-in at the provider refused (access denied) is said on the sign-in page", async () => {
    const page = await tab();
    await page.goto(`${base}/ui/?error=access_denied&error_description=The+person+declined&state=unknown`);
    await heading(page, "Sign in to Baton");
    await page.getByText(/did not complete/).waitFor({ timeout: WAIT });
    expect(page.url()).toBe(`${base}/ui/#/`);
    await page.close();
  });

  it("asked for nothing but Baton and the provider from the console, with no CSP violation or page error", () => {
    expect(offsite.filter((o) => o.includes(` from ${base}/`))).toEqual([]);
    expect(problems).toEqual([]);
  });
});
