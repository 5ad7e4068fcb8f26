import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { type BearerVerifier, createBearerVerifier, DEV_ISSUER } from "./bearer.ts";

/**
 * Bearer token refusals say what to fix (the bar: "every error says what to fix"; MCP authorization,
 * RFC 6750 `error_description`). Found by the tenancy review: jose's own texts named the failed check,
 * not what this server expects.
 */
const AUD = "http://127.0.0.1:7800/mcp";
const HOUR = 3600;

let key: CryptoKey;
let otherKey: CryptoKey;
let verifier: BearerVerifier;
let jwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const other = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  key = pair.privateKey;
  otherKey = other.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "EdDSA" };
  verifier = createBearerVerifier({ issuer: DEV_ISSUER, audience: AUD, keys: { jwks: [jwk] } });
});

interface Mint {
  claims?: Record<string, unknown>;
  sub?: string;
  aud?: string;
  iss?: string;
  exp?: number | null;
  nbf?: number;
  kid?: string;
  signWith?: CryptoKey;
}

async function mint(m: Mint = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ org: "default", kind: "agent", groups: [], roles: [], ...m.claims })
    .setProtectedHeader({ alg: "EdDSA", kid: m.kid ?? "k1" })
    .setSubject(m.sub ?? "a_one")
    .setIssuer(m.iss ?? DEV_ISSUER)
    .setAudience(m.aud ?? AUD)
    .setIssuedAt(now);
  if (m.exp !== null) jwt.setExpirationTime(m.exp ?? now + HOUR);
  if (m.nbf !== undefined) jwt.setNotBefore(m.nbf);
  return jwt.sign(m.signWith ?? key);
}

async function why(token: string): Promise<string> {
  const result = await verifier.verify(token);
  if (result.ok) throw new Error("the token verified");
  return result.error.description;
}

describe("bearer token refusals say what to fix", () => {
  it("accepts a good token and reads its identity claims and its expiry (exp, epoch ms)", async () => {
    const exp = Math.floor(Date.now() / 1000) + HOUR;
    const token = await mint({ claims: { roles: ["operator"] }, exp });
    const expected = {
      ok: true,
      identity: { id: "a_one", org: "default", kind: "agent", groups: [], operator: true },
      expiresAt: exp * 1000,
    };
    expect(await verifier.verify(token)).toEqual(expected);
    // Again, from the cache of verified tokens: the same answer.
    expect(await verifier.verify(token)).toEqual(expected);
  });

  it("a token for another resource names this server's (RFC 8707 audience binding)", async () => {
    expect(await why(await mint({ aud: "http://127.0.0.1:7911/mcp" }))).toBe(
      `the token is for "http://127.0.0.1:7911/mcp", not this server; mint one whose aud is ${AUD}`,
    );
  });

  it("a token from another issuer names the trusted one", async () => {
    expect(await why(await mint({ iss: "https://idp.example.com" }))).toBe(
      `the token was issued by "https://idp.example.com"; this server trusts tokens from ${DEV_ISSUER}`,
    );
  });

  it("a token signed by a key the server does not hold, or altered after signing", async () => {
    expect(await why(await mint({ kid: "k2", signWith: otherKey }))).toBe(
      `the token is signed by a key this server does not trust; mint one from ${DEV_ISSUER}, whose keys this server holds`,
    );
    expect(await why(await mint({ signWith: otherKey }))).toBe(
      "the token's signature does not verify: it was changed after signing, or signed with another key",
    );
  });

  it("expiry: an expired token says when; one without exp is refused; one not yet valid says from when", async () => {
    const past = Math.floor(Date.now() / 1000) - HOUR;
    expect(await why(await mint({ exp: past }))).toBe(
      `the token expired at ${new Date(past * 1000).toISOString()} (this server allows 60 s for clock skew); mint a new one`,
    );
    expect(await why(await mint({ exp: null }))).toBe(
      "the token has no expiry (exp); an access token must expire",
    );
    const later = Math.floor(Date.now() / 1000) + HOUR;
    expect(await why(await mint({ nbf: later }))).toBe(
      `the token is not valid before ${new Date(later * 1000).toISOString()} (this server allows 60 s for clock skew)`,
    );
  });

  it("wrong identity claims are all listed, each with what it must be", async () => {
    expect(
      await why(await mint({ claims: { org: "", kind: "system", roles: "operator", groups: [1] } })),
    ).toBe(
      'the token\'s claims are wrong: org must name the organization (got ""); kind must be "agent" or "person" (got "system"); groups must be a list of group names (got [1]); roles must be a list of role names, e.g. ["operator"] (got "operator")',
    );
  });

  it("issue #8: identity claims Baton could not store (a lone surrogate, NUL) refuse the token, so no call of it ends in retry", async () => {
    expect(
      await why(await mint({ sub: "a_\ud800", claims: { org: "de\u0000fault", groups: ["ok", "g\udc00"] } })),
    ).toBe(
      'the token\'s claims are wrong: sub holds a lone surrogate or NUL, which Baton cannot store (got "a_\\ud800"); org holds a lone surrogate or NUL, which Baton cannot store (got "de\\u0000fault"); groups[1] holds a lone surrogate or NUL, which Baton cannot store (got "g\\udc00")',
    );
    expect((await verifier.verify(await mint({ sub: "a_\u{1F600}" }))).ok).toBe(true);
  });

  it("something that is not a JWT, and alg none", async () => {
    expect(await why("not-a-token")).toMatch(/^the bearer token is not a signed JWT \(.+\)$/);
    const header = Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url");
    const body = Buffer.from(JSON.stringify({ sub: "a", exp: 9e9, aud: AUD, iss: DEV_ISSUER })).toString(
      "base64url",
    );
    expect(await why(`${header}.${body}.`)).toBe(
      "the token's algorithm (alg) is not accepted; sign with EdDSA, ES256, RS256, PS256 (never none nor HMAC)",
    );
  });
});

describe("issue #12: clock tolerance, audience arrays, algorithms, person clients", () => {
  const now = () => Math.floor(Date.now() / 1000);

  it("a clock a little off is tolerated (default 60 s); beyond the tolerance the token is refused", async () => {
    expect((await verifier.verify(await mint({ exp: now() - 30 }))).ok).toBe(true);
    expect((await verifier.verify(await mint({ nbf: now() + 30 }))).ok).toBe(true);
    expect(await why(await mint({ exp: now() - 120 }))).toMatch(/^the token expired at /);
    expect(await why(await mint({ nbf: now() + 120 }))).toMatch(/^the token is not valid before /);
    const strict = createBearerVerifier({
      issuer: DEV_ISSUER,
      audience: AUD,
      keys: { jwks: [jwk] },
      clockToleranceSeconds: 0,
    });
    expect((await strict.verify(await mint({ nbf: now() + 30 }))).ok).toBe(false);
  });

  it("aud as an array passes when one entry is this resource (RFC 8707), and not otherwise", async () => {
    const many = new SignJWT({ org: "default", kind: "agent" })
      .setProtectedHeader({ alg: "EdDSA", kid: "k1" })
      .setSubject("a_one")
      .setIssuer(DEV_ISSUER)
      .setExpirationTime("1h");
    expect((await verifier.verify(await many.setAudience(["account", AUD]).sign(key))).ok).toBe(true);
    expect(await why(await many.setAudience(["account", "https://other.example/mcp"]).sign(key))).toBe(
      `the token is for ["account","https://other.example/mcp"], not this server; mint one whose aud is ${AUD}`,
    );
  });

  it("a configured audience (Entra ID v2 puts the client id there) replaces the resource URL", async () => {
    const entra = createBearerVerifier({
      issuer: DEV_ISSUER,
      audience: ["6f1c2b9e-client-id"],
      keys: { jwks: [jwk] },
    });
    expect((await entra.verify(await mint({ aud: "6f1c2b9e-client-id" }))).ok).toBe(true);
    expect((await entra.verify(await mint())).ok).toBe(false);
  });

  it("HMAC signed with the issuer's public key is refused by the algorithm allow-list", async () => {
    const publicBytes = new TextEncoder().encode(JSON.stringify(jwk));
    const forged = await new SignJWT({ org: "default", kind: "agent" })
      .setProtectedHeader({ alg: "HS256", kid: "k1" })
      .setSubject("a_one")
      .setIssuer(DEV_ISSUER)
      .setAudience(AUD)
      .setExpirationTime("1h")
      .sign(publicBytes);
    expect(await why(forged)).toBe(
      "the token's algorithm (alg) is not accepted; sign with EdDSA, ES256, RS256, PS256 (never none nor HMAC)",
    );
  });

  it("§6 rule 4: with person clients set, a person's token is accepted only from a listed client; an agent's from any", async () => {
    const issuer = "https://idp.example.com";
    const guarded = createBearerVerifier({
      issuer,
      audience: AUD,
      keys: { jwks: [jwk] },
      personClients: ["baton-console"],
    });
    const person = (claims: Record<string, unknown>) =>
      mint({ iss: issuer, sub: "pat@example.com", claims: { kind: "person", ...claims } });
    expect(await guarded.verify(await person({ azp: "baton-console" }))).toMatchObject({
      ok: true,
      identity: { kind: "person", id: "pat@example.com", client: "baton-console" },
    });
    expect((await guarded.verify(await person({ client_id: "baton-console" }))).ok).toBe(true);
    const refused = await guarded.verify(await person({ azp: "agent-runner" }));
    expect(refused.ok ? "" : refused.error.description).toBe(
      "this person's token was issued to the client \"agent-runner\"; a person's token is accepted only from the clients this server lists (BATON_PERSON_CLIENTS), so that an agent never decides in a person's place (§6 rule 4)",
    );
    const none = await guarded.verify(await person({}));
    expect(none.ok ? "" : none.error.description).toMatch(/^this person's token names no client/);
    expect((await guarded.verify(await mint({ iss: issuer, claims: { azp: "agent-runner" } }))).ok).toBe(
      true,
    );
    // Dev-issuer tokens name no client and stay accepted.
    const dev = createBearerVerifier({
      issuer: DEV_ISSUER,
      audience: AUD,
      keys: { jwks: [jwk] },
      personClients: ["baton-console"],
    });
    expect((await dev.verify(await mint({ sub: "pat@example.com", claims: { kind: "person" } }))).ok).toBe(
      true,
    );
  });
});
