import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { corePublications, profilePublications, sameNameBindings } from "../fixtures.ts";
import { TIMED_PUBLICATIONS } from "../scenarios/timed/walks.ts";
import type { Identity } from "../support.ts";

/**
 * The command line of `baton conformance` (issue #18, docs/conformance-runner.md) and the tokens file
 * it reads: parsing only, no I/O but reading the tokens file, so both are unit-tested.
 */

/** Exit codes: every check passed; a check failed; the run could not start or finish (bad arguments, server unreachable, fixtures missing). */
export const EXIT = { passed: 0, failed: 1, cannotRun: 2 } as const;

/** One identity of the tokens file: who it is (as the server will name it) and its bearer token. */
export interface TokenIdentity {
  id: string;
  token: string;
}

/**
 * The tokens file (JSON): the identities the scenarios act as on a server whose tokens the runner
 * cannot mint. All in one organization but `otherOrg`.
 *
 * - `agents`: two agent identities;
 * - `groups`: for every role of the fixtures and the suite's processes (each bound to the group of the
 *   same name), two people in that group;
 * - `outsider`: a person in no group (`people`, optional: more of them); `operator`: a person with the
 *   operator role, in no group;
 * - `otherOrg`: an identity of another organization.
 */
export interface TokensFile {
  agents: TokenIdentity[];
  groups: Record<string, TokenIdentity[]>;
  outsider: TokenIdentity;
  /** Optional: more people in no group, for the checks that name several (each one fewer skipped). */
  people?: TokenIdentity[];
  operator: TokenIdentity;
  otherOrg: TokenIdentity;
}

/** What `baton conformance` was asked to do. */
export interface RunnerOptions {
  /** The MCP endpoint of the server under test. */
  url: string;
  /** The identities from `--tokens FILE`, or null with `--data-dir`. */
  tokens: TokensFile | null;
  /** `--data-dir DIR`: the folder of Baton's dev issuer, to mint any identity; null with `--tokens`. */
  dataDir: string | null;
  /** `--clock baton`: move time with Baton's manual clock admin API; null: timed scenarios are skipped. */
  clock: "baton" | null;
  /** `--only pattern`: run the checks whose title (tags included) matches this regular expression. */
  only: string | null;
  /** `--json`: print the report as JSON on stdout instead of lines. */
  json: boolean;
  /** `--junit FILE`: also write a JUnit XML report to FILE. */
  junit: string | null;
}

/** What the command line asked for: a run, the tokens template, the usage text, or an error (exit 2). */
export type Parsed =
  | { kind: "run"; options: RunnerOptions }
  | { kind: "template" }
  | { kind: "list"; json: boolean }
  | { kind: "help" }
  | { kind: "error"; message: string };

/** The usage text of `baton conformance`. */
export const RUNNER_USAGE = `baton conformance --url URL (--tokens FILE | --data-dir DIR) [--clock baton] [--only PATTERN] [--json | --junit FILE]
baton conformance --print-tokens-template
baton conformance --list [--json]
    Runs the Agent Process conformance scenarios over MCP against the server at URL and prints one
    line per check with the spec section it proves, then a summary. FILE names the identities to act
    as (docs/conformance-runner.md; --print-tokens-template writes one to fill in); against Baton,
    --data-dir DIR mints every identity from the dev issuer in DIR instead. --clock baton moves time
    with Baton's manual clock (baton dev --clock manual); without it the timed scenarios are skipped.
    --list prints every check (its item tags and spec sections) without running any.
    Exit 0: every check passed; 1: a check failed; 2: could not run.`;

/** Parses the arguments after `baton conformance`; reads the tokens file. Never throws. */
export function parseRunnerArgs(argv: string[]): Parsed {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: "string" },
        tokens: { type: "string" },
        "data-dir": { type: "string" },
        clock: { type: "string" },
        only: { type: "string" },
        json: { type: "boolean", default: false },
        junit: { type: "string" },
        "print-tokens-template": { type: "boolean", default: false },
        list: { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }));
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  if (values.help) return { kind: "help" };
  if (values["print-tokens-template"]) return { kind: "template" };
  if (values.list) return { kind: "list", json: values.json === true };
  const url = values.url as string | undefined;
  if (!url) return { kind: "error", message: "--url names the server's MCP endpoint" };
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error();
  } catch {
    return { kind: "error", message: `--url ${url} is not an http(s) URL` };
  }
  const tokensPath = values.tokens as string | undefined;
  const dataDir = (values["data-dir"] as string | undefined) ?? null;
  if (tokensPath && dataDir) return { kind: "error", message: "give --tokens or --data-dir, not both" };
  if (!tokensPath && !dataDir)
    return {
      kind: "error",
      message:
        "--tokens FILE names the identities to act as (--print-tokens-template writes one); against baton dev, --data-dir DIR",
    };
  const clock = (values.clock as string | undefined) ?? null;
  if (clock !== null && clock !== "baton")
    return {
      kind: "error",
      message: `--clock ${clock}: the one clock the runner can move is baton's (--clock baton)`,
    };
  if (values.json && values.junit) return { kind: "error", message: "give --json or --junit, not both" };
  const only = (values.only as string | undefined) ?? null;
  if (only !== null) {
    try {
      new RegExp(only);
    } catch {
      return { kind: "error", message: `--only ${only} is not a regular expression` };
    }
  }
  let tokens: TokensFile | null = null;
  if (tokensPath) {
    let text: string;
    try {
      text = readFileSync(tokensPath, "utf8");
    } catch (error) {
      return { kind: "error", message: `--tokens ${tokensPath}: ${(error as Error).message}` };
    }
    const parsed = parseTokensFile(text);
    if (!parsed.ok)
      return { kind: "error", message: `--tokens ${tokensPath}: ${parsed.problems.join("; ")}` };
    tokens = parsed.tokens;
  }
  return {
    kind: "run",
    options: {
      url,
      tokens,
      dataDir,
      clock,
      only,
      json: values.json === true,
      junit: (values.junit as string | undefined) ?? null,
    },
  };
}

const isIdentity = (v: unknown): v is TokenIdentity =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as TokenIdentity).id === "string" &&
  (v as TokenIdentity).id !== "" &&
  typeof (v as TokenIdentity).token === "string" &&
  (v as TokenIdentity).token !== "";

/**
 * Parses a tokens file (see {@link TokensFile}): every problem at once, by its JSON path. The groups
 * must be those of {@link requiredGroups}, two people each; placeholders left from the template are
 * refused.
 */
export function parseTokensFile(
  text: string,
): { ok: true; tokens: TokensFile } | { ok: false; problems: string[] } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`not JSON (${(error as Error).message})`] };
  }
  const problems: string[] = [];
  if (typeof data !== "object" || data === null || Array.isArray(data))
    return { ok: false, problems: ["not a JSON object"] };
  const file = data as Record<string, unknown>;
  const identity = (path: string, v: unknown) => {
    if (!isIdentity(v)) problems.push(`${path} must be { "id": "…", "token": "…" }`);
    else if (v.token.startsWith("<")) problems.push(`${path}.token is still the template's placeholder`);
  };
  const agents = file.agents;
  if (!Array.isArray(agents) || agents.length < 2) problems.push("agents must list two agent identities");
  else for (const [i, a] of agents.entries()) identity(`agents[${i}]`, a);
  for (const key of ["outsider", "operator", "otherOrg"]) identity(key, file[key]);
  const people = file.people;
  if (people !== undefined) {
    if (!Array.isArray(people)) problems.push("people, when given, must list people in no group");
    else for (const [i, p] of people.entries()) identity(`people[${i}]`, p);
  }
  const groups = file.groups;
  if (typeof groups !== "object" || groups === null || Array.isArray(groups))
    problems.push("groups must map each group to two people");
  else {
    const given = groups as Record<string, unknown>;
    for (const group of requiredGroups()) {
      const members = given[group];
      if (!Array.isArray(members) || members.length < 2)
        problems.push(`groups.${group} must list two people`);
      else for (const [i, m] of members.entries()) identity(`groups.${group}[${i}]`, m);
    }
  }
  const seen = new Map<string, string>();
  const all: [string, unknown][] = [
    ...(Array.isArray(agents) ? agents.map((a, i) => [`agents[${i}]`, a] as [string, unknown]) : []),
    ["outsider", file.outsider],
    ...(Array.isArray(people) ? people.map((p, i) => [`people[${i}]`, p] as [string, unknown]) : []),
    ["operator", file.operator],
  ];
  for (const [path, v] of all)
    if (isIdentity(v)) {
      const other = seen.get(v.id);
      if (other) problems.push(`${path} and ${other} are the same identity ${v.id}`);
      seen.set(v.id, path);
    }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, tokens: data as TokensFile };
}

/**
 * The groups the scenarios act in: every role of the core fixtures, the profile fixtures and the
 * suite's processes, each bound to the group of the same name (conformance README, "Fixtures"), and
 * the groups the timed scenarios bind their processes to (`scenarios/timed/walks.ts`).
 */
export function requiredGroups(): string[] {
  const groups = new Set<string>();
  for (const { folder } of [...corePublications(), ...profilePublications(["parallel-1", "check-1"])])
    for (const g of Object.values(sameNameBindings(folder))) groups.add(g);
  for (const { bindings = {} } of TIMED_PUBLICATIONS) for (const g of Object.values(bindings)) groups.add(g);
  return [...groups].sort();
}

/** The tokens file `--print-tokens-template` writes: every identity with a placeholder token. */
export function tokensTemplate(): TokensFile {
  const who = (id: string): TokenIdentity => ({ id, token: `<bearer token of ${id}>` });
  return {
    agents: [who("agent-1"), who("agent-2")],
    groups: Object.fromEntries(
      requiredGroups().map((g) => [g, [who(`${g}-1@example.com`), who(`${g}-2@example.com`)]]),
    ),
    outsider: who("outsider@example.com"),
    people: [who("person-1@example.com"), who("person-2@example.com"), who("person-3@example.com")],
    operator: who("operator@example.com"),
    otherOrg: who("other-org-agent"),
  };
}

/** A string the tests use as a person's id (an email address), as opposed to any other string. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Maps the identities a scenario asks for onto the tokens file, afresh for each check: agents of the
 * default organization onto `agents` in order of first use, a person in a group onto that group's
 * people, a person in no group onto `outsider` then `people`, an operator onto `operator`, anyone of
 * another organization onto `otherOrg`. The ids translate both ways within the check — a person the
 * scenario names in a run's inputs before acting as them is mapped there, as a person in no group —
 * so a scenario reads the server's answers in its own names. What the file cannot give is a reason
 * (the check is then skipped with it).
 */
export class TokenSlots {
  private test: string | null = null;
  private readonly chosen = new Map<string, { who: Identity; picked: TokenIdentity; named: boolean }>();
  private readonly toServer = new Map<string, string>();
  private readonly fromServer = new Map<string, string>();

  constructor(private readonly file: TokensFile) {}

  private at(test: string): void {
    if (test === this.test) return;
    this.test = test;
    this.chosen.clear();
    this.toServer.clear();
    this.fromServer.clear();
  }

  /** The identity for `who` within check `test` (a vitest test id). */
  pick(test: string, who: Identity): TokenIdentity | { reason: string } {
    return this.choose(test, who, false);
  }

  /** A string the check sends, in the server's names (a person named before acting is mapped now). */
  idToServer(test: string, value: string): string | { reason: string } {
    this.at(test);
    const known = this.toServer.get(value);
    if (known !== undefined) return known;
    if (!EMAIL.test(value) || this.fromServer.has(value)) return value;
    const picked = this.choose(test, { kind: "person", id: value }, true);
    return "token" in picked ? picked.id : picked;
  }

  /** A string the server answered, in the check's names. */
  idFromServer(test: string, value: string): string {
    this.at(test);
    return this.fromServer.get(value) ?? value;
  }

  private choose(test: string, who: Identity, named: boolean): TokenIdentity | { reason: string } {
    this.at(test);
    const key = `${who.org ?? "default"} ${who.id}`;
    const shape = (w: Identity) =>
      JSON.stringify([
        w.kind,
        w.kind === "person" ? [...(w.groups ?? [])].sort() : [],
        w.kind === "person" && !!w.operator,
      ]);
    const known = this.chosen.get(key);
    if (known) {
      if (shape(known.who) === shape(who)) return known.picked;
      // Named in an argument first (as a person in no group), then acted as: the same person.
      if (known.named && who.kind === "person" && !who.operator && (who.groups ?? []).length === 0)
        return known.picked;
      return {
        reason: `acts as ${who.id} with different groups or roles within one check (a person joining or leaving a group), which a tokens file cannot`,
      };
    }
    const taken = new Set([...this.chosen.values()].map((c) => c.picked.token));
    const first = (pool: TokenIdentity[], what: string) => {
      const free = pool.find((t) => !taken.has(t.token));
      return free ?? { reason: `acts as more ${what} than the tokens file names (${pool.length})` };
    };
    let picked: TokenIdentity | { reason: string };
    if (who.org !== undefined && who.org !== "default")
      picked = first([this.file.otherOrg], "identities of another organization");
    else if (who.kind === "agent") picked = first(this.file.agents, "agents");
    else if (who.operator) picked = first([this.file.operator], "operators");
    // A group no role of the file's groups is bound to assigns nothing: such a person is in no group that counts.
    else if (!who.groups || who.groups.every((g) => this.file.groups[g] === undefined))
      picked = first([this.file.outsider, ...(this.file.people ?? [])], "people in no group");
    else if (who.groups.length > 1)
      picked = {
        reason: `acts as one person in several groups (${who.groups.join(", ")}), which the tokens file cannot name`,
      };
    else {
      const group = who.groups[0] as string;
      const pool = this.file.groups[group];
      picked = pool
        ? first(pool, `members of ${group}`)
        : { reason: `acts as a member of ${group}, a group the tokens file does not name` };
    }
    if ("token" in picked) {
      this.chosen.set(key, { who, picked, named });
      this.toServer.set(who.id, picked.id);
      this.fromServer.set(picked.id, who.id);
    }
    return picked;
  }
}
