import { z } from "zod";
import { ASYMMETRIC_ALGORITHMS, type BearerOptions, DEFAULT_ALGORITHMS } from "./bearer.ts";
import type { ClaimMapping } from "./claims.ts";

/**
 * The environment variables that configure bearer verification for a real OIDC provider (issue #12):
 * the accepted audience, algorithms, clock tolerance, JWKS caching, the claim mapping and the person
 * clients of §6 rule 4. A service's `config.ts` spreads {@link AUTH_ENV} into its schema and hands
 * the parsed values to {@link bearerOptionsFromEnv}; `docs/configuration.md` lists them.
 */

/** A comma-separated list, trimmed, without empty entries. */
const list = (description: string) =>
  z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter((x) => x !== ""),
    )
    .describe(description);

/** The variables, as zod fields (every one optional or defaulted). */
export const AUTH_ENV = {
  BATON_AUTH_AUDIENCE: list(
    "Accepted token audiences (aud), comma-separated: a token naming none of them is refused even when its signature verifies (RFC 8707). Default: <BATON_PUBLIC_URL>/mcp. Entra ID v2 puts the client id there.",
  ).optional(),
  BATON_AUTH_ALGORITHMS: list(
    `Accepted signing algorithms, comma-separated, from ${ASYMMETRIC_ALGORITHMS.join(", ")} (never none nor HMAC). Default: ${DEFAULT_ALGORITHMS.join(", ")}.`,
  )
    .pipe(z.array(z.enum(ASYMMETRIC_ALGORITHMS)).min(1))
    .default([...DEFAULT_ALGORITHMS]),
  BATON_AUTH_CLOCK_TOLERANCE_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(600)
    .default(60)
    .describe("Clock skew allowed for a token's exp, nbf and iat, seconds."),
  BATON_AUTH_JWKS_COOLDOWN_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(30)
    .describe(
      "A token whose kid the cached JWKS lacks (a rotated key) fetches the JWKS again, at most once per this many seconds; the token is refused if the kid is still unknown.",
    ),
  BATON_AUTH_JWKS_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .default(600)
    .describe("How long a fetched JWKS is used before it is fetched again, seconds."),
  BATON_AUTH_ORG_CLAIM: z
    .string()
    .min(1)
    .default("org")
    .describe(
      "The claim naming the caller's organization, e.g. org, tid (Entra ID), org_id (Auth0), hd (Google through a broker). Dotted paths reach nested claims.",
    ),
  BATON_AUTH_ORG_PREFIX: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Read the organization from the one value of BATON_AUTH_ORG_CLAIM (a string or a list, e.g. groups) that starts with this prefix, without it: /orgs/acme with prefix /orgs/ is acme.",
    ),
  BATON_AUTH_ORG: z
    .string()
    .min(1)
    .optional()
    .describe("Every token is of this one organization (a single-tenant deployment); no claim is read."),
  BATON_AUTH_GROUPS_CLAIMS: list(
    "Claims holding the caller's groups (lists of strings), comma-separated, e.g. groups, roles, realm_access.roles, https://baton.example.com/groups. Default: groups.",
  ).default(["groups"]),
  BATON_AUTH_OPERATOR_CLAIMS: list(
    "Claims where the operator role is looked for, comma-separated. Default: roles.",
  ).default(["roles"]),
  BATON_AUTH_OPERATOR_ROLE: z
    .string()
    .min(1)
    .default("operator")
    .describe("The role or group name that makes a caller an operator."),
  BATON_AUTH_KIND: z
    .enum(["claim", "email"])
    .default("claim")
    .describe(
      "Person or agent. claim: BATON_AUTH_KIND_CLAIM says agent or person. email: a token carrying a person id claim (BATON_AUTH_PERSON_ID_CLAIMS) is a person's; one without (a client-credentials token) an agent's.",
    ),
  BATON_AUTH_KIND_CLAIM: z.string().min(1).default("kind").describe("The claim saying agent or person."),
  BATON_AUTH_PERSON_ID_CLAIMS: list(
    "The person's id (their email): the first of these claims the token carries, comma-separated, e.g. email,preferred_username. An email claim with email_verified false is refused. Default: sub.",
  ).default(["sub"]),
  BATON_AUTH_AGENT_ID_CLAIM: z
    .string()
    .min(1)
    .default("sub")
    .describe("The agent's id, e.g. sub, azp or client_id for client-credentials tokens."),
  BATON_PERSON_CLIENTS: list(
    "OAuth client ids (client_id, azp, cid or appid of the token) that may present a person's token, comma-separated: the console, a chat front end. Set, a person's token from any other client is refused, so an agent cannot decide in a person's place (§6 rule 4). Dev-issuer tokens are accepted regardless.",
  ).optional(),
} as const;

/**
 * `BATON_SECRET_PREVIOUS`: the secrets a rotation retires, still accepted when verifying claim tokens
 * and file URLs (issue #12; `secrets.ts`). A zod field for the config of a service that verifies them.
 */
export const SECRET_RING_ENV = {
  BATON_SECRET_PREVIOUS: list(
    "Previous server secrets, comma-separated, still accepted when verifying claim tokens and file URLs while a new BATON_SECRET rolls out; nothing is signed with them. Remove one once every claim made under it has ended (docs/security.md).",
  )
    .pipe(z.array(z.string().min(16, "each previous secret is at least 16 characters")))
    .optional(),
} as const;

/** The parsed values of {@link AUTH_ENV}. */
export type AuthEnv = z.infer<z.ZodObject<typeof AUTH_ENV>>;

/**
 * The problems of a combination of {@link AUTH_ENV} values that each parse alone, for a config's
 * `superRefine`: a fixed organization with a prefix, a person id read from `sub` when `email` tells
 * persons from agents (every token has a `sub`, so every caller would be a person).
 */
export function authEnvProblems(env: AuthEnv): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  if (env.BATON_AUTH_ORG !== undefined && env.BATON_AUTH_ORG_PREFIX !== undefined)
    problems.push({
      path: "BATON_AUTH_ORG_PREFIX",
      message: "set BATON_AUTH_ORG (one organization) or BATON_AUTH_ORG_PREFIX, not both",
    });
  if (env.BATON_AUTH_KIND === "email" && env.BATON_AUTH_PERSON_ID_CLAIMS.includes("sub"))
    problems.push({
      path: "BATON_AUTH_PERSON_ID_CLAIMS",
      message:
        "with BATON_AUTH_KIND=email, name the claims only a person's token carries (email, preferred_username), not sub",
    });
  if (env.BATON_AUTH_PERSON_ID_CLAIMS.length === 0)
    problems.push({ path: "BATON_AUTH_PERSON_ID_CLAIMS", message: "name at least one claim" });
  return problems;
}

/** The claim mapping the variables describe. */
export function claimMappingFromEnv(env: AuthEnv): ClaimMapping {
  return {
    org:
      env.BATON_AUTH_ORG !== undefined
        ? { from: "fixed", org: env.BATON_AUTH_ORG }
        : env.BATON_AUTH_ORG_PREFIX !== undefined
          ? { from: "prefix", claim: env.BATON_AUTH_ORG_CLAIM, prefix: env.BATON_AUTH_ORG_PREFIX }
          : { from: "claim", claim: env.BATON_AUTH_ORG_CLAIM },
    groups: env.BATON_AUTH_GROUPS_CLAIMS,
    operator: { claims: env.BATON_AUTH_OPERATOR_CLAIMS, value: env.BATON_AUTH_OPERATOR_ROLE },
    kind:
      env.BATON_AUTH_KIND === "email"
        ? { from: "email" }
        : { from: "claim", claim: env.BATON_AUTH_KIND_CLAIM },
    personId: env.BATON_AUTH_PERSON_ID_CLAIMS,
    agentId: env.BATON_AUTH_AGENT_ID_CLAIM,
  };
}

/**
 * Verifier options for an OIDC issuer (`issuer`, its `jwksUrl`) from the variables; `resource` is
 * this server's MCP resource URL, the audience unless `BATON_AUTH_AUDIENCE` is set.
 */
export function bearerOptionsFromEnv(
  env: AuthEnv,
  issuer: string,
  jwksUrl: string,
  resource: string,
): BearerOptions {
  return {
    issuer,
    audience:
      env.BATON_AUTH_AUDIENCE && env.BATON_AUTH_AUDIENCE.length > 0 ? env.BATON_AUTH_AUDIENCE : resource,
    keys: { jwksUrl },
    mapping: claimMappingFromEnv(env),
    algorithms: env.BATON_AUTH_ALGORITHMS,
    clockToleranceSeconds: env.BATON_AUTH_CLOCK_TOLERANCE_SECONDS,
    jwksCooldownSeconds: env.BATON_AUTH_JWKS_COOLDOWN_SECONDS,
    jwksMaxAgeSeconds: env.BATON_AUTH_JWKS_MAX_AGE_SECONDS,
    personClients: env.BATON_PERSON_CLIENTS ?? null,
  };
}
