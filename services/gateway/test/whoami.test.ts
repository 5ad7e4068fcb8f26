import { createBearerVerifier, DEFAULT_CLAIM_MAPPING } from "@baton/auth";
import type { WhoAmI } from "@baton/protocol";
import type { FastifyInstance } from "fastify";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestIssuer, testGateway, testIssuer } from "./gateway-harness.ts";

/**
 * `GET /api/whoami` (issue #16, "who am I"): the caller as the gateway verified it and mapped its
 * claims (issue #12), so a person can tell why they do or do not see a work item. It answers only
 * about the caller's own token, whatever the request names (isolation cannot apply: there is nobody
 * else to read), never echoes the token, and refuses a token the gateway refuses, as every call does.
 */

const PUBLIC_URL = "http://baton.test";
const RESOURCE = `${PUBLIC_URL}/mcp`;

describe("GET /api/whoami (issue #16): the verified identity, after the claim mapping", () => {
  let issuer: TestIssuer;
  let app: FastifyInstance;

  beforeAll(async () => {
    issuer = await testIssuer(PUBLIC_URL);
    app = await testGateway({ publicUrl: PUBLIC_URL, verifier: issuer.verifier });
  });
  afterAll(async () => {
    await app?.close();
  });

  async function whoami(token: string | null, query = "") {
    const response = await app.inject({
      method: "GET",
      url: `/api/whoami${query}`,
      headers: token === null ? {} : { authorization: `Bearer ${token}` },
    });
    return { status: response.statusCode, headers: response.headers, text: response.body };
  }

  it("answers each caller with its own identity, roles and expiry, in every organization, whatever the request names", async () => {
    const mia = await issuer.sign("mia@example.com", {
      org: "acme",
      kind: "person",
      groups: ["manager", "finance"],
      roles: ["operator"],
    });
    const bot = await issuer.sign("a_bot", { org: "globex", kind: "agent", groups: [], roles: [] });
    const exp = (token: string) =>
      JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString("utf8")).exp as number;

    const asMia = await whoami(mia);
    expect(asMia.status).toBe(200);
    expect(asMia.headers["cache-control"]).toBe("no-store");
    expect(JSON.parse(asMia.text)).toEqual({
      ok: true,
      data: {
        id: "mia@example.com",
        org: "acme",
        kind: "person",
        groups: ["manager", "finance"],
        roles: ["operator"],
        client: null,
        expiresAt: new Date(exp(mia) * 1000).toISOString(),
      } satisfies WhoAmI,
    });
    // The token itself never comes back.
    expect(asMia.text).not.toContain(mia.split(".")[2]);

    // Another organization's caller sees itself; naming someone else in the query changes nothing.
    const asBot = await whoami(bot, "?id=mia%40example.com&org=acme&sub=mia%40example.com");
    expect(asBot.status).toBe(200);
    expect(JSON.parse(asBot.text).data).toEqual({
      id: "a_bot",
      org: "globex",
      kind: "agent",
      groups: [],
      roles: [],
      client: null,
      expiresAt: new Date(exp(bot) * 1000).toISOString(),
    });
  });

  it("refuses a request without a token and a forged one with 401 and the resource metadata", async () => {
    const none = await whoami(null);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe(
      `Bearer resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource"`,
    );

    const good = await issuer.sign("mia@example.com", { org: "acme", kind: "person", groups: [], roles: [] });
    const [header, payload] = good.split(".");
    const forged = await whoami(`${header}.${payload}.${"A".repeat(86)}`);
    expect(forged.status).toBe(401);
    expect(forged.headers["www-authenticate"]).toMatch(/error="invalid_token"/);
    expect(JSON.parse(forged.text)).toMatchObject({ error: "invalid_token" });
  });

  it("shows what the deployment's claim mapping read from a provider's token, not its raw claims (issue #12)", async () => {
    // A Keycloak-shaped access token: the organization as a group path, the operator role among the
    // realm roles, the person's id from a verified email, issued to the console's client.
    const KEYCLOAK = "http://keycloak.test/realms/acme";
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
    const verifier = createBearerVerifier({
      issuer: KEYCLOAK,
      audience: RESOURCE,
      keys: { jwks: [{ ...(await exportJWK(publicKey)), kid: "kc-1", alg: "RS256" }] },
      mapping: {
        ...DEFAULT_CLAIM_MAPPING,
        org: { from: "prefix", claim: "groups", prefix: "/orgs/" },
        operator: { claims: ["realm_access.roles"], value: "baton-operator" },
        kind: { from: "email" },
        personId: ["email"],
        agentId: "azp",
      },
      personClients: ["baton-console"],
    });
    const keycloak = await testGateway({ publicUrl: PUBLIC_URL, verifier, issuer: KEYCLOAK });
    try {
      const token = await new SignJWT({
        email: "pat@acme.example",
        email_verified: true,
        groups: ["/orgs/acme", "reviewers"],
        realm_access: { roles: ["default-roles-acme", "baton-operator"] },
        azp: "baton-console",
      })
        .setProtectedHeader({ alg: "RS256", kid: "kc-1" })
        .setIssuer(KEYCLOAK)
        .setAudience(RESOURCE)
        .setSubject("f3b1c2d4-0000-4a5b-9c8d-123456789abc")
        .setExpirationTime("5m")
        .sign(privateKey);
      const response = await keycloak.inject({
        method: "GET",
        url: "/api/whoami",
        headers: { authorization: `Bearer ${token}` },
      });
      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body).data).toMatchObject({
        id: "pat@acme.example",
        org: "acme",
        kind: "person",
        groups: ["/orgs/acme", "reviewers"],
        roles: ["operator"],
        client: "baton-console",
      });
    } finally {
      await keycloak.close();
    }
  });
});
