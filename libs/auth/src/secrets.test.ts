import { describe, expect, it } from "vitest";
import { ClaimTokens, FileUrls, runIdFor } from "./secrets.ts";

/**
 * Issue #12: rotating the server secret without downtime. A ring signs with its current secret and
 * verifies with any (ARCHITECTURE "Claim tokens are opaque and unforgeable"; §5 file `url`s).
 */

const OLD = "old-secret-0123456789abcdef";
const NEW = "new-secret-0123456789abcdef";
const NOW = Date.parse("2026-01-01T00:00:00Z");

describe("secret rotation (issue #12)", () => {
  it("a claim token minted under the previous secret still reads; one the ring never held does not", () => {
    const before = new ClaimTokens(OLD).mint("r_abc", "c_1");
    expect(new ClaimTokens([NEW, OLD]).read(before)).toEqual({ runId: "r_abc", claimId: "c_1" });
    expect(new ClaimTokens(NEW).read(before)).toBeNull();
    expect(
      new ClaimTokens(["a-third-secret-0123456789", OLD]).read(new ClaimTokens(NEW).mint("r", "c")),
    ).toBeNull();
  });

  it("a ring mints with its current secret, so dropping the previous one later breaks nothing new", () => {
    const minted = new ClaimTokens([NEW, OLD]).mint("r_abc", "c_1");
    expect(minted).toBe(new ClaimTokens(NEW).mint("r_abc", "c_1"));
    expect(new ClaimTokens(NEW).read(minted)).toEqual({ runId: "r_abc", claimId: "c_1" });
  });

  it("a file URL signed under the previous secret still downloads until it expires", () => {
    const url = new URL(new FileUrls(OLD, "http://b", 60_000).sign("acme", "f_1", NOW));
    const [exp, sig] = [Number(url.searchParams.get("exp")), url.searchParams.get("sig") as string];
    expect(new FileUrls([NEW, OLD], "http://b", 60_000).check("acme", "f_1", exp, sig, NOW)).toBe(true);
    expect(new FileUrls(NEW, "http://b", 60_000).check("acme", "f_1", exp, sig, NOW)).toBe(false);
    expect(new FileUrls([NEW, OLD], "http://b", 60_000).check("acme", "f_2", exp, sig, NOW)).toBe(false);
    expect(new FileUrls([NEW, OLD], "http://b", 60_000).check("acme", "f_1", exp, sig, NOW + 61_000)).toBe(
      false,
    );
    const fresh = new URL(new FileUrls([NEW, OLD], "http://b", 60_000).sign("acme", "f_1", NOW));
    expect(fresh.searchParams.get("sig")).toBe(
      new URL(new FileUrls(NEW, "http://b", 60_000).sign("acme", "f_1", NOW)).searchParams.get("sig"),
    );
  });

  it("run ids derive from the current secret only (a replay after rotation is answered from the idempotency record)", () => {
    expect(runIdFor([NEW, OLD], "acme", "req-1")).toBe(runIdFor(NEW, "acme", "req-1"));
    expect(runIdFor(NEW, "acme", "req-1")).not.toBe(runIdFor(OLD, "acme", "req-1"));
  });
});
