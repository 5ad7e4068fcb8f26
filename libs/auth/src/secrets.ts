import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Server secrets. One secret (`BATON_SECRET`, or generated into the embedded data directory) is
 * stretched with HKDF into one key per purpose, so rotating it rotates them all and no key serves two
 * purposes.
 *
 * Rotation without downtime (issue #12): a {@link SecretRing} is the current secret and the previous
 * ones still accepted (`BATON_SECRET_PREVIOUS`). Claim tokens and file URLs are signed with the
 * current secret and verified with any in the ring, so what agents hold keeps working while the new
 * secret rolls out. Run ids are derived with the current secret only: a replayed `start_run` that
 * derives another id than the first call did is answered from the organization's idempotency record
 * (keyed by organization and `requestId`, whatever the run id), and an existing run is routed by the
 * id it has, which never changes; docs/security.md gives the procedure.
 */

/** Secrets in force: the first signs, every one verifies. A plain string is a ring of one. */
export type SecretRing = string | readonly [string, ...string[]];

/** The secrets of a ring, current first. */
export function ringOf(secrets: SecretRing): readonly [string, ...string[]] {
  return typeof secrets === "string" ? [secrets] : secrets;
}

/** Whether `given` equals one of `expected` (constant-time per comparison). */
function matchesAny(expected: readonly string[], given: string): boolean {
  const g = Buffer.from(given);
  let found = false;
  for (const e of expected) {
    const b = Buffer.from(e);
    if (b.length === g.length && timingSafeEqual(b, g)) found = true;
  }
  return found;
}

/** The purposes a derived key serves. */
export type KeyPurpose = "claim-token" | "file-url" | "run-id";

/** A 32-byte key for `purpose`, derived from `secret` with HKDF-SHA256. */
export function deriveKey(secret: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "baton", purpose, 32));
}

const b64u = (buf: Buffer) => buf.toString("base64url");

/**
 * Claim tokens (ARCHITECTURE "Claim tokens"; §6 rule 2): opaque to clients, unforgeable, and carrying
 * what routing needs: the run id (for the partition) and the claim id, under an HMAC. The token is a
 * pure function of `(runId, claimId)`, so a replayed `claim` returns the same token without storing it.
 */
export class ClaimTokens {
  /** Current key first; tokens are minted with it and read with any. */
  private readonly keys: Buffer[];

  constructor(secrets: SecretRing) {
    this.keys = ringOf(secrets).map((s) => deriveKey(s, "claim-token"));
  }

  /** `bt1.<base64url(runId:claimId)>.<mac>`. */
  mint(runId: string, claimId: string): string {
    const body = b64u(Buffer.from(`${runId}:${claimId}`, "utf8"));
    return `bt1.${body}.${this.mac(this.keys[0] as Buffer, body)}`;
  }

  /** The run and claim a token names, or null when it does not verify (→ `invalid`, tools.md claim). */
  read(token: string): { runId: string; claimId: string } | null {
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== "bt1") return null;
    const [, body, mac] = parts as [string, string, string];
    if (
      !matchesAny(
        this.keys.map((k) => this.mac(k, body)),
        mac,
      )
    )
      return null;
    const text = Buffer.from(body, "base64url").toString("utf8");
    const i = text.lastIndexOf(":");
    if (i <= 0) return null;
    return { runId: text.slice(0, i), claimId: text.slice(i + 1) };
  }

  private mac(key: Buffer, body: string): string {
    return b64u(createHmac("sha256", key).update(body).digest());
  }
}

/**
 * Short-lived file URLs (§5: "each file item also carries a short-lived url"): `/files/<id>` signed
 * with the organization and an expiry.
 */
export class FileUrls {
  /** Current key first; URLs are signed with it and checked with any. */
  private readonly keys: Buffer[];

  constructor(
    secrets: SecretRing,
    private readonly baseUrl: string,
    private readonly ttlMs: number,
  ) {
    this.keys = ringOf(secrets).map((s) => deriveKey(s, "file-url"));
  }

  /** A URL for `fileId` of `org`, valid until `now + ttl`. */
  sign(org: string, fileId: string, now: number): string {
    const exp = Math.floor((now + this.ttlMs) / 1000);
    const sig = this.mac(this.keys[0] as Buffer, org, fileId, exp);
    return `${this.baseUrl}/files/${encodeURIComponent(fileId)}?org=${encodeURIComponent(org)}&exp=${exp}&sig=${sig}`;
  }

  /** Whether a download request is genuine and unexpired at `now`. */
  check(org: string, fileId: string, exp: number, sig: string, now: number): boolean {
    if (!Number.isFinite(exp) || exp * 1000 < now) return false;
    return matchesAny(
      this.keys.map((k) => this.mac(k, org, fileId, exp)),
      sig,
    );
  }

  private mac(key: Buffer, org: string, fileId: string, exp: number): string {
    return b64u(createHmac("sha256", key).update(`${org}\n${fileId}\n${exp}`).digest());
  }
}

/**
 * The run id for a `start_run` (§4 idempotency): derived from the organization and the `requestId`,
 * so concurrent first calls with one `requestId` reach the same partition and create one run.
 * `r_` + 26 base32 characters (130 bits of the HMAC).
 */
export function runIdFor(secrets: SecretRing, org: string, requestId: string): string {
  const secret = ringOf(secrets)[0];
  let key = runIdKeys.get(secret);
  if (!key) {
    key = deriveKey(secret, "run-id");
    runIdKeys.set(secret, key);
  }
  const mac = createHmac("sha256", key).update(`${org}\n${requestId}`).digest();
  return `r_${base32(mac).slice(0, 26)}`;
}

/** Derived run-id keys by secret: HKDF once per secret, not once per `start_run`. */
const runIdKeys = new Map<string, Buffer>();

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** Lowercase RFC 4648 base32 without padding. */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** A random id: `prefix` + 26 base32 characters (130 bits), e.g. `f_…` for files. */
export function randomId(prefix: string): string {
  return `${prefix}${base32(randomBytes(17)).slice(0, 26)}`;
}
