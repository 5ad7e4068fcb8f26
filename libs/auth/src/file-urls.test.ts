import { describe, expect, it } from "vitest";
import { FileUrls } from "./secrets.ts";

const SECRET = "file-url-test-secret-0123456789";
const T0 = Date.parse("2026-10-06T09:00:00Z");

function parts(url: string) {
  const u = new URL(url);
  return {
    id: decodeURIComponent(u.pathname.replace(/^\/files\//, "")),
    org: u.searchParams.get("org") as string,
    exp: Number(u.searchParams.get("exp")),
    sig: u.searchParams.get("sig") as string,
  };
}

describe("FileUrls: the gateway's signed file links (§5 short-lived url; issue #10 proves expiry and tampering here)", () => {
  const urls = new FileUrls(SECRET, "https://baton.example.com", 15 * 60_000);

  it("a link checks until it expires, and not after", () => {
    const p = parts(urls.sign("acme", "f_1", T0));
    expect(p.exp).toBe((T0 + 15 * 60_000) / 1000);
    expect(urls.check(p.org, p.id, p.exp, p.sig, T0)).toBe(true);
    expect(urls.check(p.org, p.id, p.exp, p.sig, T0 + 15 * 60_000)).toBe(true);
    expect(urls.check(p.org, p.id, p.exp, p.sig, T0 + 15 * 60_000 + 1)).toBe(false);
  });

  it("a link changed in any part does not check: another file, organization or expiry, or signature", () => {
    const p = parts(urls.sign("acme", "f_1", T0));
    expect(urls.check(p.org, "f_2", p.exp, p.sig, T0)).toBe(false);
    expect(urls.check("globex", p.id, p.exp, p.sig, T0)).toBe(false);
    expect(urls.check(p.org, p.id, p.exp + 3600, p.sig, T0)).toBe(false);
    const flipped = `${p.sig.slice(0, -1)}${p.sig.endsWith("A") ? "B" : "A"}`;
    expect(urls.check(p.org, p.id, p.exp, flipped, T0)).toBe(false);
    expect(urls.check(p.org, p.id, p.exp, "", T0)).toBe(false);
    expect(urls.check(p.org, p.id, Number.NaN, p.sig, T0)).toBe(false);
  });

  it("a link signed under another secret does not check", () => {
    const other = new FileUrls("another-secret-0123456789abcdef", "https://baton.example.com", 15 * 60_000);
    const p = parts(other.sign("acme", "f_1", T0));
    expect(urls.check(p.org, p.id, p.exp, p.sig, T0)).toBe(false);
  });
});
