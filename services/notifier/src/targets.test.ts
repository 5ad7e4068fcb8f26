import { describe, expect, it } from "vitest";
import { addressProblem, checkUrl, type Resolver, resolveTarget } from "./targets.ts";

const strict = { allowHttp: false, allowPrivate: false };
const dev = { allowHttp: true, allowPrivate: true };

describe("safe webhook targets (issue #11 Safe targets)", () => {
  it("accepts public unicast addresses only", () => {
    expect(addressProblem("93.184.216.34")).toBeNull();
    expect(addressProblem("2606:4700::1111")).toBeNull();
    for (const a of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "255.255.255.255",
      "224.0.0.1",
      "::1",
      "::",
      "fd00:ec2::254",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
    ])
      expect(addressProblem(a), a).toMatch(/not a public one/);
    expect(addressProblem("::ffff:93.184.216.34")).toBeNull();
  });

  it("refuses what is not a URL, another scheme, credentials, and private IP literals", () => {
    expect(checkUrl("not a url", strict)).toEqual({ problem: expect.stringMatching(/is not a URL/) });
    expect(checkUrl("ftp://example.com/x", strict)).toEqual({
      problem: expect.stringMatching(/^ftp URLs are not allowed/),
    });
    expect(checkUrl("http://example.com/x", strict)).toEqual({
      problem: expect.stringMatching(/^http URLs are not allowed; use https/),
    });
    expect(checkUrl("https://u:p@example.com/x", strict)).toEqual({
      problem: "the URL must not carry a user name or password",
    });
    expect(checkUrl("https://127.0.0.1/hook", strict)).toEqual({
      problem: expect.stringMatching(/127\.0\.0\.1 is a loopback address.*BATON_WEBHOOK_ALLOW_PRIVATE/),
    });
    // The WHATWG URL parser normalises other spellings of an IPv4 address first.
    expect(checkUrl("https://0x7f.1/hook", strict)).toEqual({ problem: expect.stringMatching(/loopback/) });
    expect(checkUrl("https://[::1]:8443/hook", strict)).toEqual({
      problem: expect.stringMatching(/loopback/),
    });
    const ok = checkUrl("https://hooks.example.com/baton?x=1", strict);
    expect("url" in ok && ok.host).toBe("hooks.example.com");
    expect("url" in checkUrl("http://127.0.0.1:9/x", dev)).toBe(true);
  });

  it("checks every address a name resolves to, at each delivery (DNS rebinding)", async () => {
    const answers: Record<string, string[]> = {
      "public.test": ["93.184.216.34"],
      "mixed.test": ["93.184.216.34", "10.0.0.7"],
      "rebound.test": ["127.0.0.1"],
    };
    const resolver: Resolver = async (host) => {
      const list = answers[host];
      if (!list) throw Object.assign(new Error("nope"), { code: "ENOTFOUND" });
      return list.map((address) => ({ address, family: 4 as const }));
    };
    expect(await resolveTarget("public.test", strict, resolver)).toEqual({
      address: "93.184.216.34",
      family: 4,
    });
    expect(await resolveTarget("mixed.test", strict, resolver)).toEqual({
      problem: expect.stringMatching(/mixed\.test resolves to 10\.0\.0\.7 is a private address/),
    });
    expect(await resolveTarget("rebound.test", strict, resolver)).toEqual({
      problem: expect.stringMatching(/loopback/),
    });
    expect(await resolveTarget("rebound.test", dev, resolver)).toEqual({ address: "127.0.0.1", family: 4 });
    expect(await resolveTarget("missing.test", strict, resolver)).toEqual({
      problem: "missing.test does not resolve (ENOTFOUND)",
      transient: true,
    });
  });
});
