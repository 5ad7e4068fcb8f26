/**
 * Validating a parsed frontmatter against every rule of specification §2.1–§2.4, "Implementing a
 * process server" Step 1, and the keys of the parallel and check profiles; reporting every issue
 * at once, each at its position.
 *
 * Decisions where the spec is silent (each also stated where it is enforced):
 * - `description` and the text of `agent`, `task`, `approve` must contain more than whitespace.
 * - A `finish` outcome is text of 1–64 characters on one line, not blank ("a short word").
 * - `person` role names match `^[a-z][a-z0-9_-]{0,63}$`; `initiator` is never a role.
 * - `evidence` is a list of distinct kinds (`[file, file]` would suggest two files are required;
 *   one meets it, §5); `[]` means none.
 * - `on_timeout` needs `timeout`: without one it can never fire.
 * - Durations: see `duration.ts` (`0m` allowed, at most 100 years).
 */

import { durationProblem } from "./duration.ts";
import { checkGraph, type GStep, type GTarget } from "./graph.ts";
import { entriesOf, Issues, isBad, isMap, isNonBlank, isSeq, textOf } from "./node-access.ts";
import { isProcessName, isStepId, NAME_RULE, ROLE_PATTERN, STEP_ID_RULE, show } from "./patterns.ts";
import type { Position } from "./position.ts";
import {
  EVIDENCE_KINDS,
  type EvidenceKind,
  type Fields,
  type FieldType,
  type Next,
  type Process,
  type Requires,
  type Route,
  STEP_KINDS,
  type Step,
  type StepKind,
} from "./types.ts";
import { readCheck } from "./validate-check.ts";
import { type DeclaredFields, readFields } from "./validate-fields.ts";
import { type LEntry, type LMap, type LNode, toJson } from "./yaml-tree.ts";

const TOP_KEYS = ["name", "description", "inputs", "requires", "steps"] as const;
const OPTIONAL_STEP_KEYS = [
  "output",
  "evidence",
  "next",
  "person",
  "on_reject",
  "due",
  "timeout",
  "on_timeout",
  "check",
  "advisory",
] as const;
type OptionalKey = (typeof OPTIONAL_STEP_KEYS)[number];

/** The optional keys each kind takes (§2.2 table; parallel.md §1; check.md §2). */
const KIND_KEYS: Record<StepKind, readonly OptionalKey[]> = {
  agent: ["output", "evidence", "next", "due", "check", "advisory"],
  task: ["person", "output", "evidence", "next", "due", "check", "advisory"],
  approve: ["person", "next", "on_reject", "due"],
  wait: ["next"],
  wait_until: ["next"],
  wait_for: ["next", "timeout", "on_timeout"],
  finish: [],
  parallel: ["next"],
};

const KIND_LIST = STEP_KINDS.join(", ");
const PERSON_FORMS = "a role name, initiator, or a path like inputs.<field>";
const PATH_FORMS = "inputs.<field> or steps.<id>.output.<field>";

/** A target as written, before step ids are known. */
interface RawTarget {
  name: string;
  at: Position;
  path: string;
}

/** What pass one learned about a step. */
interface StepDraft {
  index: number;
  path: string;
  at: Position;
  map: LMap | null;
  keys: Map<string, LEntry>;
  /** The id when it is a string (valid or not); `idValid` says whether it matches the pattern. */
  id: string | null;
  idValid: boolean;
  kind: StepKind | null;
  /** Keys whose value was read (allowed for the kind, or the kind is unknown). */
  readable: Set<string>;
  next: RawTarget[] | null;
  nextIsList: boolean;
  /** Routes' `when` labels by route position. */
  whens: (string | undefined)[];
  onReject: RawTarget | null;
  onTimeout: RawTarget | null;
  branches: RawTarget[] | null;
  output: DeclaredFields | null;
  /** False when an edge key (next, on_reject, on_timeout, parallel) could not be read. */
  edgesOk: boolean;
}

/** The parts of a valid process that parsing fills in (all but body and hash). */
export type ValidatedProcess = Omit<Process, "body" | "contentHash">;

/** Options of {@link validateFrontmatter}. */
export interface ValidateOptions {
  folderName?: string | undefined;
}

function article(kind: string): string {
  return /^[aeiou]/.test(kind) ? `an ${kind}` : `a ${kind}`;
}

class Validator {
  readonly issues = new Issues();
  private drafts: StepDraft[] = [];
  private inputs: DeclaredFields | null = null;
  private inputsOk = true;
  /** Ids as written (valid or not) → first index; for "unknown step" without cascades. */
  private allIds = new Map<string, number>();
  /** Valid, first-occurrence ids → index. */
  private ids = new Map<string, number>();
  private usesParallel = false;
  private complete = true;

  constructor(
    private readonly root: LNode,
    private readonly options: ValidateOptions,
  ) {}

  add(at: Position, message: string) {
    this.issues.add(at, message);
  }

  run(): ValidatedProcess | null {
    const root = this.root;
    if (isBad(root)) return null;
    if (!isMap(root)) {
      this.add(root, "frontmatter: expected a mapping with name, description and steps");
      return null;
    }
    const top = entriesOf(root);
    for (const e of root.entries) {
      if (!(TOP_KEYS as readonly string[]).includes(e.key)) {
        this.add(e.keyPos, `${e.key}: unknown field; allowed: ${TOP_KEYS.join(", ")}`);
      }
    }
    this.checkName(top.get("name"), root);
    this.checkDescription(top.get("description"), root);
    const inputs = top.get("inputs");
    if (inputs) {
      this.inputs = readFields(inputs.value, "inputs", this.issues);
      this.inputsOk = this.inputs !== null || isBad(inputs.value);
    } else this.inputs = { types: new Map() };
    this.checkRequires(top.get("requires"));

    const steps = top.get("steps");
    if (steps === undefined) {
      this.add(root, "steps: required; a list of at least one step");
    } else if (!isBad(steps.value)) {
      if (!isSeq(steps.value) || steps.value.items.length === 0) {
        this.add(steps.value, "steps: must be a list of at least one step");
      } else {
        this.readSteps(steps.value.items);
      }
    }
    if (this.issues.count > 0) return null;
    return this.assemble(root);
  }

  // ---- Top level (§2.1). ----

  checkName(entry: LEntry | undefined, root: LMap) {
    if (entry === undefined) {
      this.add(root, `name: required; must match ${NAME_RULE}`);
      return;
    }
    if (isBad(entry.value)) return;
    const name = textOf(entry.value);
    if (!isProcessName(name)) {
      this.add(entry.value, `name: must match ${NAME_RULE}`);
      return;
    }
    const folder = this.options.folderName;
    if (folder !== undefined && folder !== name) {
      this.add(entry.value, `name: folder name ${show(folder)} differs from name ${show(name)}`);
    }
  }

  checkDescription(entry: LEntry | undefined, root: LMap) {
    if (entry === undefined) {
      this.add(
        root,
        "description: required; one or two sentences on what the process does and when to start it",
      );
    } else if (!isBad(entry.value) && !isNonBlank(textOf(entry.value))) {
      this.add(entry.value, "description: must be non-empty text");
    }
  }

  checkRequires(entry: LEntry | undefined) {
    if (entry === undefined || isBad(entry.value)) return;
    const v = entry.value;
    if (!isMap(v)) {
      this.add(v, "requires: expected a mapping with systems, e.g. { systems: [salesforce] }");
      return;
    }
    for (const e of v.entries) {
      if (e.key !== "systems") this.add(e.keyPos, `requires.${e.key}: unknown field; allowed: systems`);
    }
    const systems = v.entries.find((e) => e.key === "systems");
    if (systems === undefined) {
      this.add(v, "requires.systems: required; a list of system names");
      return;
    }
    if (isBad(systems.value)) return;
    if (!isSeq(systems.value) || systems.value.items.length === 0) {
      this.add(systems.value, "requires.systems: must be a non-empty list of system names");
      return;
    }
    const seen = new Set<string>();
    systems.value.items.forEach((item, i) => {
      if (isBad(item)) return;
      const name = textOf(item);
      if (!isProcessName(name)) this.add(item, `requires.systems[${i}]: must match ${NAME_RULE}`);
      else if (seen.has(name))
        this.add(item, `requires.systems[${i}]: ${show(name)} is listed twice; list each system once`);
      else seen.add(name);
    });
  }

  // ---- Steps (§2.2). ----

  readSteps(items: LNode[]) {
    // Ids first: every later rule names steps by id.
    const drafts = items.map((node, index) => this.readId(node, index));
    this.drafts = drafts;
    this.usesParallel = drafts.some((d) => d.keys.has("parallel"));
    if (this.usesParallel) {
      for (const d of drafts) {
        if (d.id === "join") {
          const idEntry = d.keys.get("id") as LEntry;
          this.add(idEntry.value, `${d.path}.id: "join" is reserved when the process has a parallel step`);
          this.complete = false;
        }
      }
    }
    for (const d of drafts) this.readStepBody(d);
    // Paths (person, wait_until) need every step's output declarations.
    for (const d of drafts) this.checkPaths(d);
    this.checkGraph();
  }

  readId(node: LNode, index: number): StepDraft {
    const path = `steps[${index}]`;
    const draft: StepDraft = {
      index,
      path,
      at: node,
      map: null,
      keys: new Map(),
      id: null,
      idValid: false,
      kind: null,
      readable: new Set(),
      next: null,
      nextIsList: false,
      whens: [],
      onReject: null,
      onTimeout: null,
      branches: null,
      output: null,
      edgesOk: true,
    };
    if (isBad(node)) {
      this.complete = false;
      return draft;
    }
    if (!isMap(node)) {
      this.add(node, `${path}: expected a mapping with id and one kind key`);
      this.complete = false;
      return draft;
    }
    draft.map = node;
    draft.keys = entriesOf(node);
    const idEntry = draft.keys.get("id");
    if (idEntry === undefined) {
      this.add(node, `${path}.id: required; a step id matches ${STEP_ID_RULE}`);
      this.complete = false;
      return draft;
    }
    if (isBad(idEntry.value)) {
      this.complete = false;
      return draft;
    }
    const id = textOf(idEntry.value);
    draft.id = id;
    if (id !== null && !this.allIds.has(id)) this.allIds.set(id, index);
    if (!isStepId(id)) {
      this.add(idEntry.value, `${path}.id: must match ${STEP_ID_RULE}`);
      this.complete = false;
      return draft;
    }
    const first = this.ids.get(id);
    if (first !== undefined) {
      this.add(idEntry.value, `${path}.id: duplicate step id ${show(id)}; steps[${first}] has it already`);
      this.complete = false;
      return draft;
    }
    draft.idValid = true;
    this.ids.set(id, index);
    return draft;
  }

  readStepBody(d: StepDraft) {
    const map = d.map;
    if (map === null) return;
    const path = d.path;
    const kinds = map.entries
      .filter((e) => (STEP_KINDS as readonly string[]).includes(e.key))
      .map((e) => e.key);
    if (kinds.length === 1) d.kind = kinds[0] as StepKind;
    else {
      const found = kinds.length === 0 ? "none" : kinds.join(", ");
      this.add(map, `${path}: exactly one kind key is required (${KIND_LIST}); found ${found}`);
      this.complete = false;
    }
    const kind = d.kind;
    for (const e of map.entries) {
      if (e.key === "id" || (STEP_KINDS as readonly string[]).includes(e.key)) continue;
      if (!(OPTIONAL_STEP_KEYS as readonly string[]).includes(e.key)) {
        const allowed =
          kind === null
            ? `id, one kind key (${KIND_LIST}), ${OPTIONAL_STEP_KEYS.join(", ")}`
            : ["id", kind, ...KIND_KEYS[kind]].join(", ");
        this.add(e.keyPos, `${path}.${e.key}: unknown field; allowed: ${allowed}`);
        continue;
      }
      if (kind !== null && !KIND_KEYS[kind].includes(e.key as OptionalKey)) {
        this.add(
          e.keyPos,
          `${path}.${e.key}: not allowed on ${kind} steps; allowed: ${["id", kind, ...KIND_KEYS[kind]].join(", ")}`,
        );
        if (e.key === "next" || e.key === "on_reject" || e.key === "on_timeout") this.complete = false;
        continue;
      }
      d.readable.add(e.key);
    }
    for (const k of kinds) this.readKindValue(d, k as StepKind, (d.keys.get(k) as LEntry).value);

    if ((kind === "task" || kind === "approve") && !d.keys.has("person")) {
      this.add(map, `${path}.person: required on ${kind} steps; use ${PERSON_FORMS}`);
    }
    const get = (k: OptionalKey) => (d.readable.has(k) ? d.keys.get(k) : undefined);

    const output = get("output");
    if (output) d.output = readFields(output.value, `${path}.output`, this.issues);
    const evidence = get("evidence");
    if (evidence) this.checkEvidence(evidence.value, `${path}.evidence`);
    const next = get("next");
    if (next) this.readNext(d, next.value);
    const onReject = get("on_reject");
    if (onReject) d.onReject = this.readTarget(d, onReject.value, `${path}.on_reject`);
    for (const k of ["due", "timeout"] as const) {
      const entry = get(k);
      if (entry && !isBad(entry.value)) {
        const problem = durationProblem(textOf(entry.value));
        if (problem !== null) this.add(entry.value, `${path}.${k}: ${problem}`);
      }
    }
    const onTimeout = get("on_timeout");
    if (onTimeout) {
      d.onTimeout = this.readTarget(d, onTimeout.value, `${path}.on_timeout`);
      if (!d.keys.has("timeout")) {
        this.add(onTimeout.keyPos, `${path}.on_timeout: needs timeout; without a timeout it never fires`);
      }
    }
    const check = get("check");
    if (check) readCheck(check.value, `${path}.check`, this.issues);
    const advisory = get("advisory");
    if (advisory) {
      const v = advisory.value;
      if (!isBad(v) && !(v.kind === "scalar" && typeof v.value === "boolean")) {
        this.add(v, `${path}.advisory: expected true or false`);
      }
      if (!d.keys.has("check")) this.add(advisory.keyPos, `${path}.advisory: allowed only beside check`);
    }
  }

  readKindValue(d: StepDraft, kind: StepKind, v: LNode) {
    if (isBad(v)) {
      if (kind === "parallel") d.edgesOk = false;
      return;
    }
    const path = `${d.path}.${kind}`;
    const text = textOf(v);
    switch (kind) {
      case "agent":
      case "task":
        if (!isNonBlank(text)) this.add(v, `${path}: must be non-empty text (the instructions)`);
        return;
      case "approve":
        if (!isNonBlank(text)) this.add(v, `${path}: must be non-empty text (what is being approved)`);
        return;
      case "wait": {
        const problem = durationProblem(text);
        if (problem !== null) this.add(v, `${path}: ${problem}`);
        return;
      }
      case "wait_until":
        // The path itself is checked once every output is known (checkPaths).
        if (text === null) this.add(v, `${path}: must be a path to a datetime field, ${PATH_FORMS}`);
        return;
      case "wait_for":
        if (!isStepId(text)) this.add(v, `${path}: an event name must match ${STEP_ID_RULE}`);
        return;
      case "finish":
        if (text === null || text.trim() === "" || text.length > 64 || /[\r\n]/.test(text)) {
          this.add(
            v,
            `${path}: must be an outcome, a short word of 1–64 characters on one line (e.g. onboarded)`,
          );
        }
        return;
      case "parallel":
        this.readBranches(d, v, path);
        return;
      default: {
        const never: never = kind;
        return never;
      }
    }
  }

  readBranches(d: StepDraft, v: LNode, path: string) {
    if (!isSeq(v) || v.items.length < 2) {
      this.add(v, `${path}: must be a list of two or more step ids (the branch entries)`);
      d.edgesOk = false;
      this.complete = false;
      return;
    }
    const out: RawTarget[] = [];
    const seen = new Set<string>();
    v.items.forEach((item, i) => {
      if (isBad(item)) {
        d.edgesOk = false;
        return;
      }
      const name = textOf(item);
      if (name === null) {
        this.add(item, `${path}[${i}]: expected a step id`);
        d.edgesOk = false;
      } else if (seen.has(name)) {
        this.add(item, `${path}[${i}]: ${show(name)} is listed twice`);
        this.complete = false;
      } else {
        seen.add(name);
        out.push({ name, at: item, path: `${path}[${i}]` });
      }
    });
    d.branches = out;
    if (!d.edgesOk) this.complete = false;
  }

  checkEvidence(v: LNode, path: string) {
    if (isBad(v)) return;
    if (!isSeq(v)) {
      this.add(v, `${path}: must be a list of evidence kinds (file, link)`);
      return;
    }
    const seen = new Set<string>();
    v.items.forEach((item, i) => {
      if (isBad(item)) return;
      const kind = textOf(item);
      if (kind === null || !(EVIDENCE_KINDS as readonly string[]).includes(kind)) {
        const shown = kind === null ? "" : ` ${show(kind)}`;
        this.add(item, `${path}[${i}]: unknown evidence kind${shown}; use file or link`);
      } else if (seen.has(kind)) {
        this.add(item, `${path}[${i}]: ${show(kind)} is listed twice; one ${kind} item meets it`);
      } else seen.add(kind);
    });
  }

  readTarget(d: StepDraft, v: LNode, path: string): RawTarget | null {
    if (isBad(v)) {
      d.edgesOk = false;
      this.complete = false;
      return null;
    }
    const name = textOf(v);
    if (name === null) {
      this.add(v, `${path}: expected a step id`);
      d.edgesOk = false;
      this.complete = false;
      return null;
    }
    return { name, at: v, path };
  }

  readNext(d: StepDraft, v: LNode) {
    const path = `${d.path}.next`;
    if (isBad(v)) {
      d.edgesOk = false;
      this.complete = false;
      return;
    }
    if (v.kind === "scalar" && typeof v.value === "string") {
      d.next = [{ name: v.value, at: v, path }];
      return;
    }
    if (!isSeq(v)) {
      this.add(v, `${path}: expected a step id or a list of routes`);
      d.edgesOk = false;
      this.complete = false;
      return;
    }
    d.nextIsList = true;
    if (d.kind !== null && d.kind !== "agent" && d.kind !== "task") {
      this.add(v, `${path}: a list of routes is allowed only on agent and task steps; use one step id`);
    } else if (v.items.length < 2) {
      this.add(v, `${path}: a list needs two or more routes; for one, write the step id`);
    }
    const out: RawTarget[] = [];
    const seen = new Set<string>();
    v.items.forEach((item, i) => {
      const itemPath = `${path}[${i}]`;
      let target: RawTarget | null = null;
      let when: string | undefined;
      if (isBad(item)) {
        d.edgesOk = false;
      } else if (item.kind === "scalar" && typeof item.value === "string") {
        target = { name: item.value, at: item, path: itemPath };
      } else if (isMap(item)) {
        for (const e of item.entries) {
          if (e.key !== "to" && e.key !== "when")
            this.add(e.keyPos, `${itemPath}.${e.key}: unknown field; allowed: to, when`);
        }
        const to = item.entries.find((e) => e.key === "to");
        const w = item.entries.find((e) => e.key === "when");
        if (w && !isBad(w.value)) {
          const text = textOf(w.value);
          if (!isNonBlank(text)) this.add(w.value, `${itemPath}.when: must be non-empty text`);
          else when = text;
        }
        if (to === undefined) {
          this.add(item, `${itemPath}.to: required; the step id this route goes to`);
          d.edgesOk = false;
        } else if (!isBad(to.value) && textOf(to.value) !== null) {
          target = { name: textOf(to.value) as string, at: to.value, path: `${itemPath}.to` };
        } else {
          if (!isBad(to.value)) this.add(to.value, `${itemPath}.to: expected a step id`);
          d.edgesOk = false;
        }
      } else {
        this.add(item, `${itemPath}: expected a step id or { to, when }`);
        d.edgesOk = false;
      }
      if (target === null) return;
      if (seen.has(target.name)) {
        this.add(item, `${itemPath}: a route to ${show(target.name)} is listed twice`);
        return;
      }
      seen.add(target.name);
      out.push(target);
      d.whens.push(when);
    });
    d.next = out;
    if (!d.edgesOk) this.complete = false;
  }

  // ---- Paths: person and wait_until (§2.2). ----

  /** The declared type at a path, or a problem message; `undefined` means "say nothing". */
  resolvePath(text: string, label: string, want: FieldType, what: string): string | null | undefined {
    const parts = text.split(".");
    let types: Map<string, FieldType | null> | null = null;
    let field: string;
    let where: string;
    if (parts.length === 2 && parts[0] === "inputs") {
      if (!this.inputsOk || this.inputs === null) return undefined;
      types = this.inputs.types;
      field = parts[1] as string;
      where = `${text} names no declared input; declare ${field} in inputs as ${want}`;
    } else if (parts.length === 4 && parts[0] === "steps" && parts[2] === "output") {
      const stepId = parts[1] as string;
      const index = this.ids.get(stepId);
      if (index === undefined) {
        if (this.allIds.has(stepId)) return undefined;
        return `${label}: ${text} names no step ${show(stepId)}`;
      }
      const draft = this.drafts[index] as StepDraft;
      if (draft.keys.has("output") && draft.output === null) return undefined;
      types = draft.output?.types ?? new Map();
      field = parts[3] as string;
      where = `${text} names no declared output of step ${show(stepId)}`;
    } else {
      return `${label}: ${show(text)} is not a valid path; use ${PATH_FORMS}`;
    }
    if (!types.has(field)) return `${label}: ${where}`;
    const type = types.get(field);
    if (type === null || type === undefined) return undefined;
    if (type !== want)
      return `${label}: ${text} is ${article(type)} field; ${what} needs ${article(want)} field`;
    return null;
  }

  checkPaths(d: StepDraft) {
    const person = d.readable.has("person") ? d.keys.get("person") : undefined;
    if (person && !isBad(person.value)) {
      const label = `${d.path}.person`;
      const text = textOf(person.value);
      if (text === null) {
        this.add(person.value, `${label}: expected ${PERSON_FORMS}`);
      } else if (text.includes(".")) {
        const problem = this.resolvePath(text, label, "person", "person");
        if (problem) this.add(person.value, problem);
      } else if (text !== "initiator" && !ROLE_PATTERN.test(text)) {
        this.add(
          person.value,
          `${label}: ${show(text)} is not a role name (${STEP_ID_RULE}); use ${PERSON_FORMS}`,
        );
      }
    }
    const waitUntil = d.keys.get("wait_until");
    if (waitUntil && !isBad(waitUntil.value)) {
      const text = textOf(waitUntil.value);
      if (text !== null) {
        const problem = this.resolvePath(text, `${d.path}.wait_until`, "datetime", "wait_until");
        if (problem) this.add(waitUntil.value, problem);
      }
    }
  }

  // ---- The graph (§2.2, parallel.md §2). ----

  resolve(d: StepDraft, t: RawTarget, joinAllowed: boolean): GTarget | null {
    if (joinAllowed && this.usesParallel && t.name === "join") return { to: "join", at: t.at, path: t.path };
    const index = this.ids.get(t.name);
    if (index !== undefined) return { to: index, at: t.at, path: t.path };
    if (!this.allIds.has(t.name)) {
      const hint =
        t.name === "join" && this.usesParallel
          ? "; join is allowed only for next and on_timeout inside a branch"
          : "";
      this.add(t.at, `${t.path}: unknown step ${show(t.name)}${hint}`);
    }
    d.edgesOk = false;
    this.complete = false;
    return null;
  }

  checkGraph() {
    const nodes: (GStep | null)[] = this.drafts.map((d) => {
      const next = d.next === null ? null : d.next.map((t) => this.resolve(d, t, true));
      const onReject = d.onReject === null ? null : this.resolve(d, d.onReject, false);
      const onTimeout = d.onTimeout === null ? null : this.resolve(d, d.onTimeout, true);
      const branches = d.branches === null ? null : d.branches.map((t) => this.resolve(d, t, false));
      if (!d.idValid || d.kind === null || d.id === null) {
        this.complete = false;
        return null;
      }
      const keep = <T>(xs: (T | null)[]) => xs.filter((x): x is T => x !== null);
      return {
        index: d.index,
        id: d.id,
        kind: d.kind,
        path: d.path,
        at: d.at,
        // A `next` that could not be read still counts as named (it is reported already).
        next: next !== null ? keep(next) : d.readable.has("next") ? [] : null,
        onReject,
        onTimeout,
        branches: branches === null ? null : keep(branches),
      };
    });
    checkGraph(nodes, this.complete, this.usesParallel, this.issues);
  }

  // ---- The valid process. ----

  assemble(root: LMap): ValidatedProcess {
    // Two independent copies: the steps and inputs a consumer reads (and might change) share no
    // object with the frontmatter the content hash was taken from.
    const frontmatter = toJson(root) as Record<string, unknown>;
    const values = toJson(root) as Record<string, unknown>;
    const steps: Step[] = this.drafts.map((d) => this.buildStep(d, values));
    // A set: a file of many steps naming many roles stays linear. It keeps first-use order.
    const roleSet = new Set<string>();
    for (const s of steps) {
      if (
        (s.kind === "task" || s.kind === "approve") &&
        s.person !== "initiator" &&
        !s.person.includes(".")
      ) {
        roleSet.add(s.person);
      }
    }
    const roles = [...roleSet];
    const profiles: string[] = [];
    if (steps.some((s) => s.kind === "parallel")) profiles.push("parallel-1");
    if (steps.some((s) => (s.kind === "agent" || s.kind === "task") && s.check !== null))
      profiles.push("check-1");
    const tools: string[] = [];
    if (steps.some((s) => (s.kind === "agent" || s.kind === "task") && s.evidence?.includes("file")))
      tools.push("upload");
    if (steps.some((s) => s.kind === "wait_for")) tools.push("send_event");
    const requires = values.requires as Requires | undefined;
    return {
      name: values.name as string,
      description: values.description as string,
      inputs: (values.inputs as Fields | undefined) ?? {},
      requires: requires === undefined ? null : { systems: requires.systems },
      steps,
      frontmatter,
      profiles,
      tools,
      roles,
    };
  }

  buildStep(d: StepDraft, values: Record<string, unknown>): Step {
    const raw = (values.steps as Record<string, unknown>[])[d.index] as Record<string, unknown>;
    const id = d.id as string;
    const line = (d.keys.get("id") as LEntry).keyPos.line;
    const str = (k: string) => (raw[k] === undefined ? null : (raw[k] as string));
    const single = (): string | null => (typeof raw.next === "string" ? raw.next : null);
    const next = (): Next | null => {
      if (raw.next === undefined) return null;
      if (typeof raw.next === "string") return raw.next;
      return (d.next ?? []).map((t, i): Route => {
        const when = d.whens[i];
        return when === undefined ? { to: t.name } : { to: t.name, when };
      });
    };
    const output = () => (raw.output === undefined ? null : (raw.output as Fields));
    const evidence = () => (raw.evidence === undefined ? null : [...(raw.evidence as EvidenceKind[])]);
    const kind = d.kind as StepKind;
    switch (kind) {
      case "agent":
        return {
          id,
          line,
          kind,
          instructions: raw.agent as string,
          output: output(),
          evidence: evidence(),
          next: next(),
          due: str("due"),
          check: raw.check === undefined ? null : raw.check,
          advisory: raw.advisory === undefined ? null : (raw.advisory as boolean),
        };
      case "task":
        return {
          id,
          line,
          kind,
          instructions: raw.task as string,
          person: raw.person as string,
          output: output(),
          evidence: evidence(),
          next: next(),
          due: str("due"),
          check: raw.check === undefined ? null : raw.check,
          advisory: raw.advisory === undefined ? null : (raw.advisory as boolean),
        };
      case "approve":
        return {
          id,
          line,
          kind,
          instructions: raw.approve as string,
          person: raw.person as string,
          next: single(),
          onReject: str("on_reject"),
          due: str("due"),
        };
      case "wait":
        return { id, line, kind, duration: raw.wait as string, next: single() };
      case "wait_until":
        return { id, line, kind, path: raw.wait_until as string, next: single() };
      case "wait_for":
        return {
          id,
          line,
          kind,
          event: raw.wait_for as string,
          timeout: str("timeout"),
          onTimeout: str("on_timeout"),
          next: single(),
        };
      case "finish":
        return { id, line, kind, outcome: raw.finish as string };
      case "parallel":
        return { id, line, kind, branches: [...(raw.parallel as string[])], next: single() };
      default: {
        const never: never = kind;
        return never;
      }
    }
  }
}

/**
 * Validates a frontmatter tree (specification §2.1–§2.4 and the profiles' keys). Returns the
 * process parts when there is no issue, and every issue found (in discovery order).
 */
export function validateFrontmatter(
  root: LNode,
  options: ValidateOptions = {},
): { process: ValidatedProcess | null; issues: readonly { line: number; col: number; message: string }[] } {
  const v = new Validator(root, options);
  const process = v.run();
  return { process, issues: v.issues.list };
}
