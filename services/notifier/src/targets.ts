// Safe webhook targets (issue #11 "Safe targets"): which URLs and resolved addresses a webhook may reach.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** What a deployment lets webhooks reach. */
export interface TargetPolicy {
  /** `http:` URLs as well as `https:` (`BATON_WEBHOOK_ALLOW_HTTP`; `baton dev` sets it). */
  allowHttp: boolean;
  /**
   * Loopback, private, link-local, metadata and other non-public addresses
   * (`BATON_WEBHOOK_ALLOW_PRIVATE`; `baton dev` sets it).
   */
  allowPrivate: boolean;
}

/** One resolved address of a host name. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host name to every address it has (the notifier's one way to DNS, so a test can stand
 * in for it). Rejects when the name does not resolve.
 */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (`getaddrinfo`, as a connection would use). */
export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/**
 * Why `address` (an IPv4 or IPv6 literal) may not be a webhook's target, or null when it is a public
 * unicast address. Everything else is refused: loopback, private (RFC 1918, unique local), link-local
 * (cloud metadata at 169.254.169.254 included), carrier-grade NAT, unspecified, broadcast, multicast,
 * reserved and documentation ranges, and IPv6 forms that embed an IPv4 address (an IPv4-mapped
 * address is judged as the IPv4 address it maps).
 */
export function addressProblem(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ""));
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  const range = parsed.range();
  if (range === "unicast") return null;
  const words: Record<string, string> = {
    loopback: "a loopback address",
    private: "a private address",
    uniqueLocal: "a private (unique local) address",
    linkLocal: "a link-local address (cloud metadata lives there)",
    carrierGradeNat: "a shared (carrier-grade NAT) address",
    unspecified: "the unspecified address",
    broadcast: "a broadcast address",
    multicast: "a multicast address",
  };
  return `${parsed.toString()} is ${words[range] ?? `a reserved address (${range})`}, not a public one`;
}

/** A checked target: the URL and its host as it will be resolved. */
export interface CheckedUrl {
  url: URL;
  /** The host name or IP literal (IPv6 without brackets). */
  host: string;
}

/**
 * Checks a webhook URL's form (issue #11): an absolute `https:` URL (or `http:` when the policy
 * allows it), with a host, no user name or password, and no fragment; an IP literal host must be a
 * public address unless the policy allows private ones. Returns the URL, or the problem in words.
 * A host name's addresses are checked by {@link resolveTarget}, at creation and at every delivery.
 */
export function checkUrl(text: string, policy: TargetPolicy): CheckedUrl | { problem: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: `${JSON.stringify(text)} is not a URL; give an absolute https:// URL` };
  }
  const schemes = policy.allowHttp ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) {
    return {
      problem: `${url.protocol.replace(/:$/, "")} URLs are not allowed; use ${policy.allowHttp ? "https or http" : "https (http only where BATON_WEBHOOK_ALLOW_HTTP=true)"}`,
    };
  }
  if (url.username || url.password) return { problem: "the URL must not carry a user name or password" };
  if (url.hash) return { problem: "the URL must not have a fragment (#…)" };
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!host) return { problem: "the URL has no host" };
  if (isIP(host) && !policy.allowPrivate) {
    const problem = addressProblem(host);
    if (problem) return { problem: `${problem} (BATON_WEBHOOK_ALLOW_PRIVATE is off)` };
  }
  return { url, host };
}

/**
 * The address to connect to for `host`, checked (issue #11: "the check is made at delivery time
 * too, against the resolved address", so a name that later resolves elsewhere — DNS rebinding —
 * cannot reach a private address). Every address the name resolves to must pass, not only the first;
 * the connection then goes to the very address checked. Returns the address, or the problem
 * (`transient` when the name did not resolve, which may pass).
 */
export async function resolveTarget(
  host: string,
  policy: TargetPolicy,
  resolver: Resolver,
): Promise<ResolvedAddress | { problem: string; transient?: true }> {
  if (isIP(host)) {
    const family = isIP(host) === 6 ? 6 : 4;
    const problem = policy.allowPrivate ? null : addressProblem(host);
    return problem ? { problem } : { address: host, family };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolver(host);
  } catch (error) {
    const code = (error as { code?: string }).code;
    return { problem: `${host} does not resolve${code ? ` (${code})` : ""}`, transient: true };
  }
  const first = addresses[0];
  if (!first) return { problem: `${host} does not resolve`, transient: true };
  if (!policy.allowPrivate) {
    for (const a of addresses) {
      const problem = addressProblem(a.address);
      if (problem) return { problem: `${host} resolves to ${problem} (BATON_WEBHOOK_ALLOW_PRIVATE is off)` };
    }
  }
  return first;
}
