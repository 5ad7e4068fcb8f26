/**
 * Reading Baton's identity from a verified token's claims, by a mapping the deployment configures
 * (issue #12), so any OIDC provider's access tokens work: Keycloak (`realm_access.roles`, `azp`),
 * Microsoft Entra ID (`tid`, `roles`, `preferred_username`, no `email_verified`), Okta (`cid`, a
 * `groups` claim), Auth0 (`org_id`, namespaced custom claims, `<client>@clients` subjects), Google
 * Workspace through a broker such as Keycloak (`hd`). The default mapping reads the claims `baton
 * token` mints: `sub`, `org`, `kind`, `groups`, `roles` (ARCHITECTURE "Identity").
 *
 * Pure: no I/O, no clock.
 */

/** The identity Baton acts on: the same shape as `@baton/protocol` `Identity`. */
export interface VerifiedIdentity {
  org: string;
  kind: "agent" | "person";
  /** The agent id, or the person's id (their email, `describe.person.format`). */
  id: string;
  /** Group ids, matched against `--bind role=group`. */
  groups: string[];
  /** Holds the operator role (§3.5 cancel, §3.6 send_event, the escalation queue, the admin API). */
  operator: boolean;
  /** The OAuth client the token was issued to (`client_id`, `azp`, `cid` or `appid`), when it names one. */
  client?: string;
}

/** Where the organization comes from. */
export type OrgSource =
  /** A claim holding the organization's id, e.g. `org`, Entra's `tid`, Auth0's `org_id`, Google's `hd`. */
  | { from: "claim"; claim: string }
  /** Every token is of this one organization (a single-tenant deployment). */
  | { from: "fixed"; org: string }
  /**
   * The one value of `claim` (a string or a list of strings) that starts with `prefix`, without it:
   * `groups: ["/orgs/acme", "/team-a"]` with prefix `/orgs/` is `acme`.
   */
  | { from: "prefix"; claim: string; prefix: string };

/**
 * How a token's claims become a {@link VerifiedIdentity}. A claim name is tried as written first
 * (namespaced claims such as `https://baton.example.com/groups` hold dots), then as a dotted path
 * into nested objects (`realm_access.roles`).
 */
export interface ClaimMapping {
  org: OrgSource;
  /** Claims whose values (a list of strings each) are the caller's groups; absent ones add none. */
  groups: string[];
  /** The operator role: held when any of `claims` holds `value` (a role name or a group name). */
  operator: { claims: string[]; value: string };
  /**
   * Person or agent. `claim`: the claim's value is `agent` or `person`. `email`: a token carrying one
   * of the {@link ClaimMapping.personId} claims is a person's, one without it (a client-credentials
   * token) an agent's.
   */
  kind: { from: "claim"; claim: string } | { from: "email" };
  /**
   * The person's id: the first of these claims the token carries. A claim named `email` is refused
   * when the token says `email_verified: false` (the provider has not verified it).
   */
  personId: string[];
  /** The agent's id. */
  agentId: string;
}

/** Today's claims (ARCHITECTURE "Identity"), what `baton token` and the dev issuer mint. */
export const DEFAULT_CLAIM_MAPPING: ClaimMapping = {
  org: { from: "claim", claim: "org" },
  groups: ["groups"],
  operator: { claims: ["roles"], value: "operator" },
  kind: { from: "claim", claim: "kind" },
  personId: ["sub"],
  agentId: "sub",
};

/** The claims that may name the OAuth client a token was issued to, in the order they are read. */
export const CLIENT_CLAIMS = ["client_id", "azp", "cid", "appid"] as const;

/** The value of `name` in `payload`: the claim as written, else a dotted path into nested objects. */
export function claimAt(payload: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  if (!name.includes(".")) return undefined;
  let at: unknown = payload;
  for (const part of name.split(".")) {
    if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, part))
      return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

const got = (v: unknown) => (v === undefined ? "it is missing" : `got ${JSON.stringify(v)}`);

/** Text Baton cannot store (issue #8): a lone surrogate has no UTF-8 form and PostgreSQL refuses NUL. */
const unstorable = (v: string) => !v.isWellFormed() || v.includes("\u0000");

/**
 * The identity `payload` (a verified token's claims) carries under `mapping`, or every problem at
 * once, each saying which claim and what it must be. Values Baton could not store (a lone surrogate,
 * NUL) are problems too: the identity is written with every transition it makes.
 */
export function readIdentity(
  payload: Record<string, unknown>,
  mapping: ClaimMapping = DEFAULT_CLAIM_MAPPING,
): { ok: true; identity: VerifiedIdentity } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const stored: [string, string][] = [];

  // Kind first: it decides which claim is the id.
  let kind: "agent" | "person" | null = null;
  let personClaim: string | null = null;
  for (const name of mapping.personId) {
    const v = claimAt(payload, name);
    if (typeof v === "string" && v !== "") {
      personClaim = name;
      break;
    }
  }
  let kindProblem: string | null = null;
  if (mapping.kind.from === "claim") {
    const v = claimAt(payload, mapping.kind.claim);
    if (v === "agent" || v === "person") kind = v;
    else kindProblem = `${mapping.kind.claim} must be "agent" or "person" (${got(v)})`;
  } else {
    kind = personClaim === null ? "agent" : "person";
  }

  let id = "";
  if (kind === "person") {
    if (personClaim === null) {
      problems.push(
        `${mapping.personId.join(" or ")} must be the person's id, their email (${got(claimAt(payload, mapping.personId[0] ?? "sub"))})`,
      );
    } else {
      id = claimAt(payload, personClaim) as string;
      stored.push([personClaim, id]);
      if (personClaim === "email" || personClaim.endsWith(".email")) {
        const verified = claimAt(payload, personClaim.replace(/email$/, "email_verified"));
        if (verified === false || verified === "false")
          problems.push(
            `${personClaim} is not verified (email_verified is false); a person's id must be an email the provider has verified`,
          );
      }
    }
  } else {
    const v = claimAt(payload, mapping.agentId);
    if (typeof v !== "string" || v === "")
      problems.push(`${mapping.agentId} must be the agent id or the person's email (${got(v)})`);
    else {
      id = v;
      stored.push([mapping.agentId, v]);
    }
  }

  let org = "";
  const source = mapping.org;
  if (source.from === "fixed") org = source.org;
  else if (source.from === "claim") {
    const v = claimAt(payload, source.claim);
    if (typeof v !== "string" || v === "")
      problems.push(`${source.claim} must name the organization (${got(v)})`);
    else {
      org = v;
      stored.push([source.claim, v]);
    }
  } else {
    const raw = claimAt(payload, source.claim);
    const values = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw : [];
    const orgs = values.filter(
      (x): x is string =>
        typeof x === "string" && x.startsWith(source.prefix) && x.length > source.prefix.length,
    );
    if (orgs.length !== 1)
      problems.push(
        `${source.claim} must hold exactly one value starting with "${source.prefix}", naming the organization (${orgs.length === 0 ? got(raw) : `got ${orgs.length}: ${JSON.stringify(orgs)}`})`,
      );
    else {
      org = (orgs[0] as string).slice(source.prefix.length);
      stored.push([source.claim, org]);
    }
  }

  if (kindProblem !== null) problems.push(kindProblem);

  const groups: string[] = [];
  for (const name of mapping.groups) {
    const list = stringList(claimAt(payload, name));
    if (list === null) {
      problems.push(`${name} must be a list of group names (${got(claimAt(payload, name))})`);
      continue;
    }
    list.forEach((g, i) => {
      stored.push([`${name}[${i}]`, g]);
      if (!groups.includes(g)) groups.push(g);
    });
  }

  let operator = false;
  for (const name of mapping.operator.claims) {
    const list = stringList(claimAt(payload, name));
    if (list === null) {
      problems.push(
        `${name} must be a list of role names, e.g. [${JSON.stringify(mapping.operator.value)}] (${got(claimAt(payload, name))})`,
      );
      continue;
    }
    if (list.includes(mapping.operator.value)) operator = true;
  }

  for (const [claim, value] of stored) {
    if (unstorable(value))
      problems.push(`${claim} holds a lone surrogate or NUL, which Baton cannot store (${got(value)})`);
  }
  if (problems.length > 0 || kind === null) return { ok: false, problems };
  const identity: VerifiedIdentity = { org, kind, id, groups, operator };
  const client = clientOf(payload);
  if (client !== undefined) identity.client = client;
  return { ok: true, identity };
}

/** A claim's values as a list of strings (absent: none), or null when it is not one. */
function stringList(v: unknown): string[] | null {
  if (v === undefined) return [];
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
  return null;
}

/** The OAuth client a token was issued to, by the first of {@link CLIENT_CLAIMS} it carries. */
export function clientOf(payload: Record<string, unknown>): string | undefined {
  for (const name of CLIENT_CLAIMS) {
    const v = payload[name];
    if (typeof v === "string" && v !== "") return v;
  }
  return undefined;
}
