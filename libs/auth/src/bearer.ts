import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTVerifyGetKey,
  jwtVerify,
  SignJWT,
} from "jose";

/**
 * Bearer tokens (ARCHITECTURE "Identity"; MCP authorization with OAuth 2.1 bearer tokens). Baton is a
 * resource server: it verifies JWTs from an issuer by its JWKS, checks `aud` is this MCP resource, and
 * reads the identity claims. `baton dev` ships a dev issuer (an Ed25519 key in the data directory)
 * that `baton token` signs with.
 */

/** The identity claims Baton reads from a verified token. */
export interface TokenClaims {
  /** `sub`: the agent id, or the person's email. */
  sub: string;
  org: string;
  kind: "agent" | "person";
  groups: string[];
  roles: string[];
}

/** Why a bearer token was refused (HTTP 401 with `WWW-Authenticate`). */
export interface BearerError {
  error: "invalid_token";
  description: string;
}

/** The dev issuer's key material, kept in `<data-dir>/dev-issuer.json` (private; never commit it). */
export interface DevIssuer {
  issuer: string;
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

/** The dev issuer's `iss`. */
export const DEV_ISSUER = "urn:baton:dev-issuer";

/**
 * Loads the dev issuer from `file`, creating a fresh Ed25519 key there (mode 0600) when it does not
 * exist. Throws when the file exists but is not a dev issuer.
 */
export async function loadOrCreateDevIssuer(file: string): Promise<DevIssuer> {
  if (existsSync(file)) {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as DevIssuer;
    if (!parsed.privateJwk || !parsed.publicJwk || !parsed.kid)
      throw new Error(`${file} is not a dev issuer key file`);
    return parsed;
  }
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const kid = `dev-${Date.now().toString(36)}`;
  const issuer: DevIssuer = {
    issuer: DEV_ISSUER,
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: "EdDSA" },
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" },
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(issuer, null, 2)}\n`, { mode: 0o600 });
  return issuer;
}

/** Signs a bearer token with the dev issuer for `audience` (the MCP resource URL), valid `ttlSeconds`. */
export async function mintDevToken(
  issuer: DevIssuer,
  claims: TokenClaims,
  audience: string,
  ttlSeconds = 30 * 24 * 3600,
): Promise<string> {
  const key = await importJWK(issuer.privateJwk, "EdDSA");
  return new SignJWT({ org: claims.org, kind: claims.kind, groups: claims.groups, roles: claims.roles })
    .setProtectedHeader({ alg: "EdDSA", kid: issuer.kid, typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuer(issuer.issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(key);
}

/** Where verification keys come from. */
export type KeySource = { jwks: JWK[] } | { jwksUrl: string };

/** Verifies bearer tokens: signature by `keys`, `iss`, `aud`, expiry, and the identity claims. */
export interface BearerVerifier {
  verify(token: string): Promise<{ ok: true; claims: TokenClaims } | { ok: false; error: BearerError }>;
}

/**
 * Builds a verifier once at start (the key set is resolved and cached by jose). `audience` is this
 * server's MCP resource URL; tokens for another resource are refused (RFC 8707 audience binding).
 */
export function createBearerVerifier(options: {
  issuer: string;
  audience: string;
  keys: KeySource;
}): BearerVerifier {
  const getKey: JWTVerifyGetKey =
    "jwks" in options.keys
      ? createLocalJWKSet({ keys: options.keys.jwks })
      : createRemoteJWKSet(new URL(options.keys.jwksUrl));
  // Verifying an EdDSA signature costs more than the rest of a tool call's gateway work, and agents
  // send the same token with every call: remember verified tokens until they expire (bounded; the
  // oldest entry goes first). A token is never trusted past its own `exp`.
  const verified = new Map<string, { claims: TokenClaims; exp: number }>();
  const CACHE = 10_000;
  return {
    async verify(token) {
      const hit = verified.get(token);
      if (hit) {
        if (hit.exp * 1000 > Date.now()) return { ok: true, claims: hit.claims };
        verified.delete(token);
      }
      try {
        const { payload } = await jwtVerify(token, getKey, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms: ["EdDSA", "ES256", "RS256", "PS256"],
          // An access token without an expiry would be good forever.
          requiredClaims: ["exp", "sub"],
        });
        const problems: string[] = [];
        const got = (v: unknown) => (v === undefined ? "it is missing" : `got ${JSON.stringify(v)}`);
        if (typeof payload.sub !== "string" || payload.sub === "")
          problems.push(`sub must be the agent id or the person's email (${got(payload.sub)})`);
        if (typeof payload.org !== "string" || payload.org === "")
          problems.push(`org must name the organization (${got(payload.org)})`);
        if (payload.kind !== "agent" && payload.kind !== "person")
          problems.push(`kind must be "agent" or "person" (${got(payload.kind)})`);
        const groups = payload.groups ?? [];
        const roles = payload.roles ?? [];
        if (!Array.isArray(groups) || !groups.every((g) => typeof g === "string"))
          problems.push(`groups must be a list of group names (${got(groups)})`);
        if (!Array.isArray(roles) || !roles.every((r) => typeof r === "string"))
          problems.push(`roles must be a list of role names, e.g. ["operator"] (${got(roles)})`);
        // The identity is written with every transition it makes (the journal, idempotency
        // records), so text Baton cannot store there would make every call fail further in (issue
        // #8): a lone surrogate has no UTF-8 form and PostgreSQL refuses NUL.
        const named: [string, unknown][] = [
          ["sub", payload.sub],
          ["org", payload.org],
          ...(Array.isArray(groups) ? groups.map((g, i) => [`groups[${i}]`, g] as [string, unknown]) : []),
        ];
        for (const [claim, value] of named) {
          if (typeof value === "string" && (!value.isWellFormed() || value.includes("\u0000")))
            problems.push(`${claim} holds a lone surrogate or NUL, which Baton cannot store (${got(value)})`);
        }
        if (problems.length > 0) {
          return {
            ok: false,
            error: {
              error: "invalid_token",
              description: `the token's claims are wrong: ${problems.join("; ")}`,
            },
          };
        }
        const claims: TokenClaims = {
          sub: payload.sub as string,
          org: payload.org as string,
          kind: payload.kind as "agent" | "person",
          groups: groups as string[],
          roles: roles as string[],
        };
        if (verified.size >= CACHE) verified.delete(verified.keys().next().value as string);
        verified.set(token, { claims, exp: payload.exp as number });
        return { ok: true, claims };
      } catch (error) {
        return { ok: false, error: { error: "invalid_token", description: whyRefused(error, options) } };
      }
    },
  };
}

/**
 * What to fix, for a token jose refused ("every error says what to fix"). jose's own texts
 * (`unexpected "aud" claim value`, `no applicable key found in the JSON Web Key Set`) say what failed,
 * not what this server expects.
 */
function whyRefused(error: unknown, expected: { issuer: string; audience: string }): string {
  const at = (seconds: unknown) =>
    typeof seconds === "number" ? new Date(seconds * 1000).toISOString() : String(seconds);
  if (error instanceof errors.JWTExpired) {
    return `the token expired at ${at(error.payload.exp)}; mint a new one`;
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    const { claim, reason, payload } = error;
    if (reason === "missing") {
      return claim === "exp"
        ? "the token has no expiry (exp); an access token must expire"
        : `the token has no "${claim}" claim`;
    }
    switch (claim) {
      case "aud":
        return `the token is for ${JSON.stringify(payload.aud)}, not this server; mint one whose aud is ${expected.audience}`;
      case "iss":
        return `the token was issued by ${JSON.stringify(payload.iss)}; this server trusts tokens from ${expected.issuer}`;
      case "nbf":
        return `the token is not valid before ${at(payload.nbf)}`;
      default:
        return `the token's "${claim}" claim is not valid (${error.message})`;
    }
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return `the token is signed by a key this server does not trust; mint one from ${expected.issuer}, whose keys this server holds`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return "the token's signature does not verify: it was changed after signing, or signed with another key";
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return "the token's algorithm (alg) is not accepted; sign with EdDSA, ES256, RS256 or PS256";
  }
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) {
    return `the bearer token is not a signed JWT (${error.message})`;
  }
  return `the token did not verify (${error instanceof Error ? error.message : String(error)})`;
}
