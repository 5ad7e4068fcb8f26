import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type ClaimMapping, claimAt, DEFAULT_CLAIM_MAPPING, readIdentity } from "./claims.ts";
import { AUTH_ENV, authEnvProblems, claimMappingFromEnv } from "./env.ts";

/**
 * Issue #12: identity read from any OIDC provider's claims by a configured mapping (ARCHITECTURE
 * "Identity"; §6 rule 4 for person versus agent). Pure: claims in, identity or problems out. The
 * providers' whole tokens, signed and served by a real JWKS, are in
 * `services/gateway/test/oidc-providers.test.ts`.
 */

const env = (vars: Record<string, string>) => z.object(AUTH_ENV).parse(vars);
const mapping = (vars: Record<string, string>): ClaimMapping => claimMappingFromEnv(env(vars));

describe("claim mapping", () => {
  it("the default mapping reads today's claims (sub, org, kind, groups, roles)", () => {
    expect(
      readIdentity({ sub: "a_1", org: "acme", kind: "agent", groups: ["g"], roles: ["operator"] }),
    ).toEqual({
      ok: true,
      identity: { id: "a_1", org: "acme", kind: "agent", groups: ["g"], operator: true },
    });
    expect(claimMappingFromEnv(env({}))).toEqual(DEFAULT_CLAIM_MAPPING);
  });

  it("a claim name is tried as written (namespaced claims hold dots), then as a dotted path", () => {
    const payload = {
      "https://baton.example.com/groups": ["a"],
      realm_access: { roles: ["r"] },
      "realm_access.roles": undefined,
    };
    expect(claimAt(payload, "https://baton.example.com/groups")).toEqual(["a"]);
    expect(claimAt({ realm_access: { roles: ["r"] } }, "realm_access.roles")).toEqual(["r"]);
    expect(claimAt({ realm_access: ["x"] }, "realm_access.0")).toBeUndefined();
  });

  it("the organization from a fixed value, a claim, or the one prefixed value of a list", () => {
    const base = { sub: "a", kind: "agent" };
    expect(readIdentity(base, mapping({ BATON_AUTH_ORG: "acme" }))).toMatchObject({
      identity: { org: "acme" },
    });
    expect(readIdentity({ ...base, tid: "t-1" }, mapping({ BATON_AUTH_ORG_CLAIM: "tid" }))).toMatchObject({
      identity: { org: "t-1" },
    });
    const prefixed = mapping({ BATON_AUTH_ORG_CLAIM: "groups", BATON_AUTH_ORG_PREFIX: "/orgs/" });
    expect(readIdentity({ ...base, groups: ["/team", "/orgs/acme"] }, prefixed)).toMatchObject({
      identity: { org: "acme", groups: ["/team", "/orgs/acme"] },
    });
    // Two organizations, or none, is not one the caller belongs to.
    expect(readIdentity({ ...base, groups: ["/orgs/a", "/orgs/b"] }, prefixed)).toEqual({
      ok: false,
      problems: [
        'groups must hold exactly one value starting with "/orgs/", naming the organization (got 2: ["/orgs/a","/orgs/b"])',
      ],
    });
    expect(readIdentity({ ...base, groups: ["/team"] }, prefixed).ok).toBe(false);
  });

  it("person versus agent by the email claim: a client-credentials token (no email) is an agent", () => {
    const m = mapping({
      BATON_AUTH_KIND: "email",
      BATON_AUTH_PERSON_ID_CLAIMS: "email,preferred_username",
      BATON_AUTH_AGENT_ID_CLAIM: "azp",
      BATON_AUTH_ORG: "acme",
    });
    expect(readIdentity({ sub: "u-1", azp: "console", email: "pat@acme.example" }, m)).toMatchObject({
      identity: { kind: "person", id: "pat@acme.example", client: "console" },
    });
    expect(
      readIdentity({ sub: "u-1", azp: "console", preferred_username: "pat@acme.example" }, m),
    ).toMatchObject({ identity: { kind: "person", id: "pat@acme.example" } });
    expect(readIdentity({ sub: "svc-uuid", azp: "reviewer-bot" }, m)).toMatchObject({
      identity: { kind: "agent", id: "reviewer-bot" },
    });
  });

  it("an email the provider says is not verified is not a person's id", () => {
    const m = mapping({
      BATON_AUTH_KIND: "email",
      BATON_AUTH_PERSON_ID_CLAIMS: "email",
      BATON_AUTH_ORG: "acme",
    });
    for (const verified of [false, "false"]) {
      expect(readIdentity({ sub: "u", email: "pat@acme.example", email_verified: verified }, m)).toEqual({
        ok: false,
        problems: [
          "email is not verified (email_verified is false); a person's id must be an email the provider has verified",
        ],
      });
    }
    // Providers that never send email_verified (Entra ID) are taken as they are.
    expect(readIdentity({ sub: "u", email: "pat@acme.example" }, m).ok).toBe(true);
  });

  it("the operator role from any configured claim, by name; groups from several claims, without repeats", () => {
    const m = mapping({
      BATON_AUTH_ORG: "acme",
      BATON_AUTH_GROUPS_CLAIMS: "groups,realm_access.roles",
      BATON_AUTH_OPERATOR_CLAIMS: "realm_access.roles",
      BATON_AUTH_OPERATOR_ROLE: "baton-operator",
    });
    expect(
      readIdentity(
        { sub: "a", kind: "agent", groups: ["x", "y"], realm_access: { roles: ["y", "baton-operator"] } },
        m,
      ),
    ).toMatchObject({ identity: { groups: ["x", "y", "baton-operator"], operator: true } });
    expect(readIdentity({ sub: "a", kind: "agent", realm_access: { roles: ["operator"] } }, m)).toMatchObject(
      {
        identity: { operator: false },
      },
    );
  });

  it("combinations that cannot work are refused at start", () => {
    expect(authEnvProblems(env({ BATON_AUTH_ORG: "a", BATON_AUTH_ORG_PREFIX: "p" }))).toHaveLength(1);
    expect(authEnvProblems(env({ BATON_AUTH_KIND: "email" }))).toEqual([
      {
        path: "BATON_AUTH_PERSON_ID_CLAIMS",
        message:
          "with BATON_AUTH_KIND=email, name the claims only a person's token carries (email, preferred_username), not sub",
      },
    ]);
    expect(z.object(AUTH_ENV).safeParse({ BATON_AUTH_ALGORITHMS: "RS256,HS256" }).success).toBe(false);
    expect(z.object(AUTH_ENV).safeParse({ BATON_AUTH_ALGORITHMS: "none" }).success).toBe(false);
  });
});
