import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Server secrets. One secret (`BATON_SECRET`, or generated into the embedded data directory) is
 * stretched with HKDF into one key per purpose, so rotating it rotates them all and no key serves two
 * purposes.
 */

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
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = deriveKey(secret, "claim-token");
  }

  /** `bt1.<base64url(runId:claimId)>.<mac>`. */
  mint(runId: string, claimId: string): string {
    const body = b64u(Buffer.from(`${runId}:${claimId}`, "utf8"));
    return `bt1.${body}.${this.mac(body)}`;
  }

  /** The run and claim a token names, or null when it does not verify (→ `invalid`, tools.md claim). */
  read(token: string): { runId: string; claimId: string } | null {
    const parts = token.split(".");
    if (parts.length !== 3 || parts[0] !== "bt1") return null;
    const [, body, mac] = parts as [string, string, string];
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    const text = Buffer.from(body, "base64url").toString("utf8");
    const i = text.lastIndexOf(":");
    if (i <= 0) return null;
    return { runId: text.slice(0, i), claimId: text.slice(i + 1) };
  }

  private mac(body: string): string {
    return b64u(createHmac("sha256", this.key).update(body).digest());
  }
}

/**
 * Short-lived file URLs (§5: "each file item also carries a short-lived url"): `/files/<id>` signed
 * with the organization and an expiry.
 */
export class FileUrls {
  private readonly key: Buffer;

  constructor(
    secret: string,
    private readonly baseUrl: string,
    private readonly ttlMs: number,
  ) {
    this.key = deriveKey(secret, "file-url");
  }

  /** A URL for `fileId` of `org`, valid until `now + ttl`. */
  sign(org: string, fileId: string, now: number): string {
    const exp = Math.floor((now + this.ttlMs) / 1000);
    const sig = this.mac(org, fileId, exp);
    return `${this.baseUrl}/files/${encodeURIComponent(fileId)}?org=${encodeURIComponent(org)}&exp=${exp}&sig=${sig}`;
  }

  /** Whether a download request is genuine and unexpired at `now`. */
  check(org: string, fileId: string, exp: number, sig: string, now: number): boolean {
    if (!Number.isFinite(exp) || exp * 1000 < now) return false;
    const expected = Buffer.from(this.mac(org, fileId, exp));
    const given = Buffer.from(sig);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  private mac(org: string, fileId: string, exp: number): string {
    return b64u(createHmac("sha256", this.key).update(`${org}\n${fileId}\n${exp}`).digest());
  }
}

/**
 * The run id for a `start_run` (§4 idempotency): derived from the organization and the `requestId`,
 * so concurrent first calls with one `requestId` reach the same partition and create one run.
 * `r_` + 26 base32 characters (130 bits of the HMAC).
 */
export function runIdFor(secret: string, org: string, requestId: string): string {
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
