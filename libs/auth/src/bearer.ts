import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
  SignJWT,
} from "jose";
import { type ClaimMapping, DEFAULT_CLAIM_MAPPING, readIdentity, type VerifiedIdentity } from "./claims.ts";

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
  /** `invalid_token`: refused (HTTP 401); `temporarily_unavailable`: the keys could not be fetched (503). */
  error: "invalid_token" | "temporarily_unavailable";
  description: string;
  /** Set when sending the same token again later may succeed (the issuer's JWKS was unreachable). */
  retryable?: true;
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

/** Where verification keys come from: a key list (the dev issuer), or the issuer's JWKS URL. */
export type KeySource = { jwks: JWK[] } | { jwksUrl: string };

/**
 * The asymmetric JWS algorithms a deployment may allow. HMAC (`HS*`) and `none` are not among them:
 * an HMAC "signature" made with the issuer's public key would verify for anyone who has that key.
 */
export const ASYMMETRIC_ALGORITHMS = [
  "EdDSA",
  "ES256",
  "ES384",
  "ES512",
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
] as const;
export type Algorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

/** The algorithms accepted unless configured otherwise. */
export const DEFAULT_ALGORITHMS: readonly Algorithm[] = ["EdDSA", "ES256", "RS256", "PS256"];

/** How a verifier checks tokens (issue #12). Every duration is in seconds. */
export interface BearerOptions {
  /** The issuer (`iss`) tokens must name. */
  issuer: string;
  /**
   * The audiences accepted (RFC 8707 audience binding): this MCP resource's URL (`<public URL>/mcp`)
   * by default; some providers (Entra ID v2) put the client id there. A token whose `aud` (a string
   * or an array) names none of them is refused, even when its signature verifies.
   */
  audience: string | string[];
  keys: KeySource;
  /** How claims become an identity (default {@link DEFAULT_CLAIM_MAPPING}). */
  mapping?: ClaimMapping;
  /** Allowed `alg`s (default {@link DEFAULT_ALGORITHMS}); only asymmetric ones exist here. */
  algorithms?: readonly Algorithm[];
  /** Slack for `exp`, `nbf` and `iat` against this server's clock (default 60). */
  clockToleranceSeconds?: number;
  /** A token with a `kid` the cached JWKS lacks fetches it again, at most once per this interval (default 30). */
  jwksCooldownSeconds?: number;
  /** A cached JWKS is fetched again after this long even when every `kid` is known (default 600). */
  jwksMaxAgeSeconds?: number;
  /** How long one JWKS fetch may take (default 5). */
  jwksTimeoutSeconds?: number;
  /**
   * §6 rule 4: when set, a person's token is accepted only when issued to one of these OAuth clients
   * (its `client_id`, `azp`, `cid` or `appid`: the console, a chat front end), so an agent holding a
   * person's token cannot decide in the person's place. Tokens of the dev issuer are exempt (they name
   * no client). An agent's token is never a person's, whatever client it came from.
   */
  personClients?: readonly string[] | null;
}

/**
 * A verifier's answer: the identity and when the token expires (`expiresAt`, its `exp` as epoch ms,
 * without the clock tolerance), or why the token is refused.
 */
export type Verified =
  | { ok: true; identity: VerifiedIdentity; expiresAt: number }
  | { ok: false; error: BearerError };

/** Verifies bearer tokens: signature by `keys`, `iss`, `aud`, expiry, and the identity claims. */
export interface BearerVerifier {
  verify(token: string): Promise<Verified>;
}

/**
 * Builds a verifier once at start. The JWKS is fetched on first use and cached by jose: a token
 * whose `kid` the cache lacks fetches it again (key rotation), at most once per
 * `jwksCooldownSeconds`; a token signed by a key the issuer no longer lists is refused after that
 * fetch. Throws nothing; every refusal is a {@link BearerError} saying what to fix.
 */
export function createBearerVerifier(options: BearerOptions): BearerVerifier {
  const getKey: JWTVerifyGetKey =
    "jwks" in options.keys
      ? createLocalJWKSet({ keys: options.keys.jwks })
      : createRemoteJWKSet(new URL(options.keys.jwksUrl), {
          cooldownDuration: (options.jwksCooldownSeconds ?? 30) * 1000,
          cacheMaxAge: (options.jwksMaxAgeSeconds ?? 600) * 1000,
          timeoutDuration: (options.jwksTimeoutSeconds ?? 5) * 1000,
        });
  const mapping = options.mapping ?? DEFAULT_CLAIM_MAPPING;
  const algorithms = [...(options.algorithms ?? DEFAULT_ALGORITHMS)];
  const tolerance = options.clockToleranceSeconds ?? 60;
  const personClients =
    options.personClients && options.issuer !== DEV_ISSUER ? new Set(options.personClients) : null;
  const expected = {
    issuer: options.issuer,
    audience: options.audience,
    algorithms,
    tolerance,
    remote: "jwksUrl" in options.keys,
  };
  // Verifying a signature costs more than the rest of a tool call's gateway work, and agents send the
  // same token with every call: remember verified tokens until they expire (bounded; the oldest
  // entry goes first). A token is never trusted past its own `exp` (plus the clock tolerance).
  const verified = new Map<string, { identity: VerifiedIdentity; expiresAt: number; until: number }>();
  const CACHE = 10_000;
  const refuse = (description: string): Verified => ({
    ok: false,
    error: { error: "invalid_token", description },
  });
  return {
    async verify(token) {
      const hit = verified.get(token);
      if (hit) {
        if (hit.until > Date.now()) return { ok: true, identity: hit.identity, expiresAt: hit.expiresAt };
        verified.delete(token);
      }
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, getKey, {
          issuer: options.issuer,
          audience: options.audience,
          algorithms,
          clockTolerance: tolerance,
          // An access token without an expiry would be good forever.
          requiredClaims: ["exp"],
        }));
      } catch (error) {
        if (expected.remote && isKeysUnavailable(error)) {
          return {
            ok: false,
            error: {
              error: "temporarily_unavailable",
              description: `the issuer's signing keys (JWKS) could not be fetched now; try again shortly`,
              retryable: true,
            },
          };
        }
        return refuse(whyRefused(error, token, expected));
      }
      const read = readIdentity(payload as Record<string, unknown>, mapping);
      if (!read.ok) return refuse(`the token's claims are wrong: ${read.problems.join("; ")}`);
      const identity = read.identity;
      if (personClients && identity.kind === "person") {
        if (identity.client === undefined || !personClients.has(identity.client)) {
          return refuse(
            `${identity.client === undefined ? "this person's token names no client (client_id or azp)" : `this person's token was issued to the client ${JSON.stringify(identity.client)}`}; a person's token is accepted only from the clients this server lists (BATON_PERSON_CLIENTS), so that an agent never decides in a person's place (§6 rule 4)`,
          );
        }
      }
      if (verified.size >= CACHE) verified.delete(verified.keys().next().value as string);
      const expiresAt = (payload.exp as number) * 1000;
      verified.set(token, { identity, expiresAt, until: expiresAt + tolerance * 1000 });
      return { ok: true, identity, expiresAt };
    },
  };
}

/**
 * Whether jose failed to get the issuer's keys (a time-out, a network error, an answer that is not a
 * JWKS), rather than refusing the token: the caller is told to try again, not to mint a new token.
 */
function isKeysUnavailable(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return true;
  if (error instanceof errors.JOSEError) return /JSON Web Key Set HTTP response/.test(error.message);
  // fetch's own failures (connection refused, DNS) are TypeErrors saying "fetch failed".
  return error instanceof TypeError && /fetch/i.test(error.message);
}

/**
 * What to fix, for a token jose refused ("every error says what to fix"). jose's own texts
 * (`unexpected "aud" claim value`, `no applicable key found in the JSON Web Key Set`) say what failed,
 * not what this server expects.
 */
function whyRefused(
  error: unknown,
  token: string,
  expected: {
    issuer: string;
    audience: string | string[];
    algorithms: string[];
    tolerance: number;
    remote: boolean;
  },
): string {
  const at = (seconds: unknown) =>
    typeof seconds === "number" ? new Date(seconds * 1000).toISOString() : String(seconds);
  if (error instanceof errors.JWTExpired) {
    return `the token expired at ${at(error.payload.exp)} (this server allows ${expected.tolerance} s for clock skew); mint a new one`;
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
        return `the token is for ${JSON.stringify(payload.aud)}, not this server; mint one whose aud is ${Array.isArray(expected.audience) ? expected.audience.join(" or ") : expected.audience}`;
      case "iss":
        return `the token was issued by ${JSON.stringify(payload.iss)}; this server trusts tokens from ${expected.issuer}`;
      case "nbf":
        return `the token is not valid before ${at(payload.nbf)} (this server allows ${expected.tolerance} s for clock skew)`;
      default:
        return `the token's "${claim}" claim is not valid (${error.message})`;
    }
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return expected.remote
      ? `the token is signed by a key${kid(token)} that the issuer's JWKS does not list, even fetched again; mint one from ${expected.issuer} with a current key`
      : `the token is signed by a key this server does not trust; mint one from ${expected.issuer}, whose keys this server holds`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return "the token's signature does not verify: it was changed after signing, or signed with another key";
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return `the token's algorithm (alg) is not accepted; sign with ${expected.algorithms.join(", ")} (never none nor HMAC)`;
  }
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) {
    return `the bearer token is not a signed JWT (${error.message})`;
  }
  return `the token did not verify (${error instanceof Error ? error.message : String(error)})`;
}

/** ` (kid "…")` for a token whose header names one, for a refusal's text; empty otherwise. */
function kid(token: string): string {
  try {
    const header = decodeProtectedHeader(token);
    return typeof header.kid === "string" ? ` (kid ${JSON.stringify(header.kid.slice(0, 100))})` : "";
  } catch {
    return "";
  }
}
