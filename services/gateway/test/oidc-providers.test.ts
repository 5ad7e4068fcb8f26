import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bearerOptionsFromEnv, createBearerVerifier, type VerifiedIdentity } from "@baton/auth";
import type { FastifyInstance } from "fastify";
import { type CryptoKey, exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayConfigSchema } from "../src/config.ts";
import { postMcp, testGateway } from "./gateway-harness.ts";

/**
 * Issue #12 "Any OIDC provider" (MCP authorization: Baton is an OAuth 2.1 resource server). Tokens
 * shaped as Keycloak, Microsoft Entra ID (v2), Okta, Auth0 and Google Workspace through a Keycloak
 * broker issue them are signed by keys the test serves as a real JWKS over HTTP; the gateway's own
 * configuration schema reads each provider's claim mapping from environment variables, as an operator
 * sets them (docs/configuration.md), and the verifier built from it must read the right identity.
 * Then the refusals, through the gateway's HTTP: each answered 401 with a `WWW-Authenticate` that says
 * why (RFC 6750 `error_description`), and the JWKS fetched again for an unknown `kid` at most once per
 * cool-down (key rotation).
 */

const PUBLIC_URL = "http://baton.test";
const RESOURCE = `${PUBLIC_URL}/mcp`;
const HOUR = 3600;

let jwksServer: Server;
let jwksUrl: string;
/** What the JWKS endpoint serves now; a test rotates keys by changing it. */
let served: JWK[] = [];
let fetches = 0;
let rsa: { privateKey: CryptoKey; publicKey: CryptoKey };
let ec: { privateKey: CryptoKey; publicKey: CryptoKey };

beforeAll(async () => {
  rsa = await generateKeyPair("RS256", { extractable: true });
  ec = await generateKeyPair("ES256", { extractable: true });
  served = [
    { ...(await exportJWK(rsa.publicKey)), kid: "rsa-1", alg: "RS256", use: "sig" },
    { ...(await exportJWK(ec.publicKey)), kid: "ec-1", alg: "ES256", use: "sig" },
  ];
  jwksServer = createServer((req, res) => {
    if (req.url !== "/jwks") {
      res.writeHead(404).end();
      return;
    }
    fetches++;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: served }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks`;
});
afterAll(async () => {
  await new Promise((resolve) => jwksServer?.close(resolve));
});

/** The gateway's configuration for `vars` (plus what every gateway needs), parsed by its own schema. */
function configFor(vars: Record<string, string>) {
  return GatewayConfigSchema.parse({
    NATS_URL: "nats://127.0.0.1:4222",
    BATON_SECRET: "oidc-providers-test-secret-0123456789",
    BATON_PUBLIC_URL: PUBLIC_URL,
    BATON_BLOB_DIR: "unused",
    BATON_AUTH_ISSUER: vars.iss,
    BATON_AUTH_JWKS_URL: jwksUrl,
    ...vars,
  });
}

function verifierFor(vars: Record<string, string>) {
  const config = configFor(vars);
  return createBearerVerifier(
    bearerOptionsFromEnv(config, config.BATON_AUTH_ISSUER as string, jwksUrl, RESOURCE),
  );
}

interface Signed {
  claims: Record<string, unknown>;
  alg?: "RS256" | "ES256";
  kid?: string;
  header?: Record<string, unknown>;
}

async function sign({ claims, alg = "RS256", kid, header = {} }: Signed): Promise<string> {
  const key = alg === "RS256" ? rsa.privateKey : ec.privateKey;
  return new SignJWT(claims)
    .setProtectedHeader({ alg, typ: "JWT", kid: kid ?? (alg === "RS256" ? "rsa-1" : "ec-1"), ...header })
    .sign(key);
}

const now = () => Math.floor(Date.now() / 1000);
const times = () => ({ iat: now(), nbf: now(), exp: now() + HOUR });

/** A provider: the variables an operator sets, and tokens as it issues them with the identity expected. */
interface Provider {
  name: string;
  vars: Record<string, string>;
  alg: "RS256" | "ES256";
  header?: Record<string, unknown>;
  tokens: { who: string; claims: () => Record<string, unknown>; identity: VerifiedIdentity }[];
}

const KC = "http://keycloak.test/realms/acme";
const ENTRA_TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const ENTRA = `https://login.microsoftonline.com/${ENTRA_TENANT}/v2.0`;
const ENTRA_API = "api://9a3c1f7e-baton";
const OKTA = "https://acme.okta.com/oauth2/default";
const AUTH0 = "https://acme.us.auth0.com/";
const NS = "https://baton.example.com/";

const PROVIDERS: Provider[] = [
  {
    name: "Keycloak (realm roles, groups with the organization as a path prefix, azp)",
    alg: "RS256",
    vars: {
      iss: KC,
      BATON_AUTH_ORG_CLAIM: "groups",
      BATON_AUTH_ORG_PREFIX: "/orgs/",
      BATON_AUTH_GROUPS_CLAIMS: "groups",
      BATON_AUTH_OPERATOR_CLAIMS: "realm_access.roles",
      BATON_AUTH_OPERATOR_ROLE: "baton-operator",
      BATON_AUTH_KIND: "email",
      BATON_AUTH_PERSON_ID_CLAIMS: "email",
      BATON_AUTH_AGENT_ID_CLAIM: "azp",
      BATON_PERSON_CLIENTS: "baton-console",
    },
    tokens: [
      {
        who: "a person through the console",
        claims: () => ({
          ...times(),
          auth_time: now(),
          jti: randomUUID(),
          iss: KC,
          aud: [RESOURCE, "account"],
          sub: "f3b1c2d4-0000-4a5b-9c8d-123456789abc",
          typ: "Bearer",
          azp: "baton-console",
          sid: randomUUID(),
          acr: "1",
          "allowed-origins": [PUBLIC_URL],
          realm_access: { roles: ["default-roles-acme", "offline_access", "baton-operator"] },
          resource_access: { account: { roles: ["manage-account"] } },
          scope: "openid email profile",
          email_verified: true,
          name: "Pat Doe",
          preferred_username: "pat",
          given_name: "Pat",
          family_name: "Doe",
          email: "pat@acme.example",
          groups: ["/orgs/acme", "/reviewers"],
        }),
        identity: {
          org: "acme",
          kind: "person",
          id: "pat@acme.example",
          groups: ["/orgs/acme", "/reviewers"],
          operator: true,
          client: "baton-console",
        },
      },
      {
        who: "a service account (client credentials: no email)",
        claims: () => ({
          ...times(),
          jti: randomUUID(),
          iss: KC,
          aud: RESOURCE,
          sub: "0b7e2d61-5c4f-4e8a-a1b2-c3d4e5f60718",
          typ: "Bearer",
          azp: "reviewer-bot",
          acr: "1",
          realm_access: { roles: ["default-roles-acme"] },
          scope: "profile email",
          clientHost: "10.0.0.7",
          email_verified: false,
          preferred_username: "service-account-reviewer-bot",
          clientAddress: "10.0.0.7",
          client_id: "reviewer-bot",
          groups: ["/orgs/acme"],
        }),
        identity: {
          org: "acme",
          kind: "agent",
          id: "reviewer-bot",
          groups: ["/orgs/acme"],
          operator: false,
          client: "reviewer-bot",
        },
      },
    ],
  },
  {
    name: "Microsoft Entra ID v2 (client id as audience, tid, app roles, no email_verified)",
    alg: "RS256",
    header: { x5t: "nOo3ZDrODXEK1jKWhXslHR_KXEg" },
    vars: {
      iss: ENTRA,
      BATON_AUTH_AUDIENCE: ENTRA_API,
      BATON_AUTH_ORG_CLAIM: "tid",
      BATON_AUTH_GROUPS_CLAIMS: "groups",
      BATON_AUTH_OPERATOR_CLAIMS: "roles",
      BATON_AUTH_OPERATOR_ROLE: "Baton.Operator",
      BATON_AUTH_KIND: "email",
      BATON_AUTH_PERSON_ID_CLAIMS: "email,preferred_username",
      BATON_AUTH_AGENT_ID_CLAIM: "azp",
      BATON_PERSON_CLIENTS: "5d2c7a4e-console",
    },
    tokens: [
      {
        who: "a user signed in to the console",
        claims: () => ({
          ...times(),
          aud: ENTRA_API,
          iss: ENTRA,
          aio: "AXQAi/8TAAAA",
          azp: "5d2c7a4e-console",
          azpacr: "0",
          name: "Pat Doe",
          oid: "690222be-ff1a-4d56-abd1-7e4f7d38e474",
          preferred_username: "pat@contoso.onmicrosoft.com",
          rh: "0.AAAA",
          roles: ["Baton.Operator"],
          groups: ["b1d0f3a2-group-reviewers"],
          scp: "access_as_user",
          sub: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
          tid: ENTRA_TENANT,
          uti: "fqiBqXLPj0eQa82S-IYFAA",
          ver: "2.0",
        }),
        identity: {
          org: ENTRA_TENANT,
          kind: "person",
          id: "pat@contoso.onmicrosoft.com",
          groups: ["b1d0f3a2-group-reviewers"],
          operator: true,
          client: "5d2c7a4e-console",
        },
      },
      {
        who: "an app-only token (client credentials)",
        claims: () => ({
          ...times(),
          aud: ENTRA_API,
          iss: ENTRA,
          azp: "c0ffee00-reviewer-bot",
          azpacr: "1",
          idtyp: "app",
          oid: "2a8c3e51-0000-4f2e-9b1d-7c6a5e4d3c2b",
          roles: ["Baton.Agent"],
          sub: "2a8c3e51-0000-4f2e-9b1d-7c6a5e4d3c2b",
          tid: ENTRA_TENANT,
          ver: "2.0",
        }),
        identity: {
          org: ENTRA_TENANT,
          kind: "agent",
          id: "c0ffee00-reviewer-bot",
          groups: [],
          operator: false,
          client: "c0ffee00-reviewer-bot",
        },
      },
    ],
  },
  {
    name: "Okta (one organization, cid, a groups claim)",
    alg: "RS256",
    vars: {
      iss: OKTA,
      BATON_AUTH_ORG: "acme",
      BATON_AUTH_GROUPS_CLAIMS: "groups",
      BATON_AUTH_OPERATOR_CLAIMS: "groups",
      BATON_AUTH_OPERATOR_ROLE: "baton-operators",
      BATON_AUTH_KIND: "email",
      BATON_AUTH_PERSON_ID_CLAIMS: "email",
      BATON_AUTH_AGENT_ID_CLAIM: "cid",
      BATON_PERSON_CLIENTS: "0oa1console",
    },
    tokens: [
      {
        who: "a user",
        claims: () => ({
          ...times(),
          ver: 1,
          jti: "AT.tK2n3k",
          iss: OKTA,
          aud: RESOURCE,
          cid: "0oa1console",
          uid: "00u1pat",
          scp: ["openid", "email", "baton"],
          auth_time: now(),
          sub: "pat@acme.example",
          email: "pat@acme.example",
          groups: ["Everyone", "reviewers"],
        }),
        identity: {
          org: "acme",
          kind: "person",
          id: "pat@acme.example",
          groups: ["Everyone", "reviewers"],
          operator: false,
          client: "0oa1console",
        },
      },
      {
        who: "a client-credentials service",
        claims: () => ({
          ...times(),
          ver: 1,
          jti: "AT.x9",
          iss: OKTA,
          aud: RESOURCE,
          cid: "0oa1bot",
          scp: ["baton"],
          sub: "0oa1bot",
        }),
        identity: {
          org: "acme",
          kind: "agent",
          id: "0oa1bot",
          groups: [],
          operator: false,
          client: "0oa1bot",
        },
      },
    ],
  },
  {
    name: "Auth0 (org_id, namespaced custom claims, <client>@clients subjects)",
    alg: "RS256",
    vars: {
      iss: AUTH0,
      BATON_AUTH_ORG_CLAIM: "org_id",
      BATON_AUTH_GROUPS_CLAIMS: `${NS}groups`,
      BATON_AUTH_OPERATOR_CLAIMS: `${NS}roles`,
      BATON_AUTH_KIND: "email",
      BATON_AUTH_PERSON_ID_CLAIMS: `${NS}email`,
      BATON_AUTH_AGENT_ID_CLAIM: "azp",
      BATON_PERSON_CLIENTS: "Console0Client",
    },
    tokens: [
      {
        who: "a user of an organization",
        claims: () => ({
          ...times(),
          [`${NS}email`]: "pat@acme.example",
          [`${NS}roles`]: ["operator"],
          [`${NS}groups`]: ["reviewers"],
          iss: AUTH0,
          sub: "auth0|6523f1d2c4b5a6e7f8091a2b",
          aud: [RESOURCE, `${AUTH0}userinfo`],
          scope: "openid profile email",
          azp: "Console0Client",
          org_id: "org_9ybsU1dN2dKfDkBi",
          permissions: [],
        }),
        identity: {
          org: "org_9ybsU1dN2dKfDkBi",
          kind: "person",
          id: "pat@acme.example",
          groups: ["reviewers"],
          operator: true,
          client: "Console0Client",
        },
      },
      {
        who: "a machine-to-machine application",
        claims: () => ({
          ...times(),
          iss: AUTH0,
          sub: "Bot0Client@clients",
          aud: RESOURCE,
          scope: "baton",
          gty: "client-credentials",
          azp: "Bot0Client",
          org_id: "org_9ybsU1dN2dKfDkBi",
        }),
        identity: {
          org: "org_9ybsU1dN2dKfDkBi",
          kind: "agent",
          id: "Bot0Client",
          groups: [],
          operator: false,
          client: "Bot0Client",
        },
      },
    ],
  },
  {
    name: "Google Workspace through a Keycloak broker (hd as the organization, ES256)",
    alg: "ES256",
    vars: {
      iss: KC,
      BATON_AUTH_ORG_CLAIM: "hd",
      BATON_AUTH_GROUPS_CLAIMS: "groups",
      BATON_AUTH_OPERATOR_CLAIMS: "realm_access.roles",
      BATON_AUTH_OPERATOR_ROLE: "baton-operator",
      BATON_AUTH_KIND: "email",
      BATON_AUTH_PERSON_ID_CLAIMS: "email",
      BATON_AUTH_AGENT_ID_CLAIM: "azp",
    },
    tokens: [
      {
        who: "a Google Workspace user, brokered",
        claims: () => ({
          ...times(),
          iss: KC,
          aud: RESOURCE,
          sub: "7d1e0c9b-google-brokered",
          typ: "Bearer",
          azp: "baton-console",
          identity_provider: "google",
          hd: "acme.example",
          email: "pat@acme.example",
          email_verified: true,
          realm_access: { roles: ["default-roles-acme"] },
          groups: ["reviewers"],
        }),
        identity: {
          org: "acme.example",
          kind: "person",
          id: "pat@acme.example",
          groups: ["reviewers"],
          operator: false,
          client: "baton-console",
        },
      },
      {
        who: "a service account with the domain set by a hard-coded claim mapper",
        claims: () => ({
          ...times(),
          iss: KC,
          aud: RESOURCE,
          sub: "5e4d3c2b-service",
          azp: "triage-bot",
          hd: "acme.example",
          realm_access: { roles: ["baton-operator"] },
        }),
        identity: {
          org: "acme.example",
          kind: "agent",
          id: "triage-bot",
          groups: [],
          operator: true,
          client: "triage-bot",
        },
      },
    ],
  },
];

describe("issue #12: tokens as five providers issue them, verified against a JWKS served over HTTP", () => {
  for (const provider of PROVIDERS) {
    it(provider.name, async () => {
      const verifier = verifierFor(provider.vars);
      for (const t of provider.tokens) {
        const token = await sign({
          claims: t.claims(),
          alg: provider.alg,
          ...(provider.header ? { header: provider.header } : {}),
        });
        expect(await verifier.verify(token), t.who).toEqual({
          ok: true,
          identity: t.identity,
          expiresAt: expect.any(Number),
        });
      }
    });
  }

  it("Google through the broker: an email Google has not verified is no person's id", async () => {
    const google = PROVIDERS[4] as Provider;
    const token = await sign({
      claims: { ...(google.tokens[0]?.claims() ?? {}), email_verified: false },
      alg: "ES256",
    });
    const result = await verifierFor(google.vars).verify(token);
    expect(result.ok ? "" : result.error.description).toBe(
      "the token's claims are wrong: email is not verified (email_verified is false); a person's id must be an email the provider has verified",
    );
  });

  it("§6 rule 4: the person's token from another client (an agent runner) is refused", async () => {
    const keycloak = PROVIDERS[0] as Provider;
    const claims = { ...(keycloak.tokens[0]?.claims() ?? {}), azp: "agent-runner" };
    const result = await verifierFor(keycloak.vars).verify(await sign({ claims }));
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error.description).toContain('issued to the client "agent-runner"');
  });
});

describe("issue #12: refusals through the gateway, each a 401 whose WWW-Authenticate says why", () => {
  let app: FastifyInstance;
  const keycloak = PROVIDERS[0] as Provider;
  const good = () => keycloak.tokens[0]?.claims() ?? {};

  beforeAll(async () => {
    app = await testGateway({ publicUrl: PUBLIC_URL, verifier: verifierFor(keycloak.vars), issuer: KC });
  });
  afterAll(async () => {
    await app?.close();
  });

  async function post(token: string) {
    return postMcp(app, token, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "describe", arguments: {} },
    });
  }

  /** The refusal's `error_description` from `WWW-Authenticate`, after checking the rest of the header. */
  async function refusal(token: string): Promise<string> {
    const response = await post(token);
    expect(response.statusCode).toBe(401);
    const header = String(response.headers["www-authenticate"]);
    expect(header).toMatch(
      /^Bearer resource_metadata="http:\/\/baton\.test\/\.well-known\/oauth-protected-resource", error="invalid_token", error_description="[^"]*"$/,
    );
    return /error_description="([^"]*)"/.exec(header)?.[1] ?? "";
  }

  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

  it("a good token is served", async () => {
    const response = await post(await sign({ claims: good() }));
    expect(response.statusCode).toBe(200);
    expect(response.json().result.structuredContent.ok).toBe(true);
  });

  it("unsigned (alg none)", async () => {
    expect(await refusal(`${b64({ alg: "none", typ: "JWT" })}.${b64(good())}.`)).toBe(
      "the token's algorithm (alg) is not accepted; sign with EdDSA, ES256, RS256, PS256 (never none nor HMAC)",
    );
  });

  it("HMAC-signed with the issuer's public key", async () => {
    const publicPem = new TextEncoder().encode(await exportSPKI(rsa.publicKey));
    const forged = await new SignJWT(good())
      .setProtectedHeader({ alg: "HS256", typ: "JWT", kid: "rsa-1" })
      .sign(publicPem);
    expect(await refusal(forged)).toBe(
      "the token's algorithm (alg) is not accepted; sign with EdDSA, ES256, RS256, PS256 (never none nor HMAC)",
    );
  });

  it("issued for another resource, though its signature verifies (RFC 8707)", async () => {
    expect(
      await refusal(await sign({ claims: { ...good(), aud: ["https://other.example/mcp", "account"] } })),
    ).toBe(
      `the token is for ['https://other.example/mcp','account'], not this server; mint one whose aud is ${RESOURCE}`,
    );
  });

  it("expired beyond the clock tolerance (60 s); within it, served", async () => {
    const exp = now() - 120;
    expect(await refusal(await sign({ claims: { ...good(), exp } }))).toBe(
      `the token expired at ${new Date(exp * 1000).toISOString()} (this server allows 60 s for clock skew); mint a new one`,
    );
    expect((await post(await sign({ claims: { ...good(), exp: now() - 20 } }))).statusCode).toBe(200);
    expect((await post(await sign({ claims: { ...good(), nbf: now() + 20 } }))).statusCode).toBe(200);
  });

  it("missing exp", async () => {
    const { exp: _exp, ...claims } = good();
    expect(await refusal(await sign({ claims }))).toBe(
      "the token has no expiry (exp); an access token must expire",
    );
  });

  it("signed by a key the issuer's JWKS does not list, even after fetching it again", async () => {
    const stranger = await generateKeyPair("RS256");
    const token = await new SignJWT(good())
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: "rsa-unknown" })
      .sign(stranger.privateKey);
    expect(await refusal(token)).toBe(
      `the token is signed by a key (kid 'rsa-unknown') that the issuer's JWKS does not list, even fetched again; mint one from ${KC} with a current key`,
    );
  });
});

describe("issue #12: key rotation: an unknown kid fetches the JWKS again, at most once per cool-down", () => {
  it("a new key is picked up after one fetch; unknown kids within the cool-down fetch nothing", async () => {
    const vars = { ...(PROVIDERS[0] as Provider).vars, BATON_AUTH_JWKS_COOLDOWN_SECONDS: "3" };
    const verifier = verifierFor(vars);
    const claims = () => (PROVIDERS[0] as Provider).tokens[0]?.claims() ?? {};
    const before = fetches;
    expect((await verifier.verify(await sign({ claims: claims() }))).ok).toBe(true);
    expect(fetches - before).toBe(1);

    // The provider rotates: a new key joins the set. Past the cool-down, its first token fetches once.
    const next = await generateKeyPair("RS256", { extractable: true });
    // Signed before the cool-down starts, so the flood below takes milliseconds of its 3 s, however
    // busy the machine is (jose's cool-down reads the real time).
    const stranger = await generateKeyPair("RS256");
    const ghosts: string[] = [];
    for (let i = 0; i < 5; i++)
      ghosts.push(
        await new SignJWT(claims())
          .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: `ghost-${i}` })
          .sign(stranger.privateKey),
      );
    served = [...served, { ...(await exportJWK(next.publicKey)), kid: "rsa-2", alg: "RS256", use: "sig" }];
    await new Promise((r) => setTimeout(r, 3_100));
    const rotated = await new SignJWT(claims())
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: "rsa-2" })
      .sign(next.privateKey);
    expect((await verifier.verify(rotated)).ok).toBe(true);
    expect(fetches - before).toBe(2);

    // A flood of unknown kids right after: refused without fetching (the cool-down holds).
    for (const token of ghosts) expect((await verifier.verify(token)).ok).toBe(false);
    expect(fetches - before).toBe(2);
  });

  it("an unreachable JWKS is a 503-style 'try again', not a refused token", async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((resolve) => dead.close(resolve));
    const vars = (PROVIDERS[0] as Provider).vars;
    const config = configFor(vars);
    const verifier = createBearerVerifier(
      bearerOptionsFromEnv(config, KC, `http://127.0.0.1:${port}/jwks`, RESOURCE),
    );
    const result = await verifier.verify(
      await sign({ claims: (PROVIDERS[0] as Provider).tokens[0]?.claims() ?? {} }),
    );
    expect(result).toEqual({
      ok: false,
      error: {
        error: "temporarily_unavailable",
        description: "the issuer's signing keys (JWKS) could not be fetched now; try again shortly",
        retryable: true,
      },
    });
  });
});
