import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseProcess } from "@baton/process";

/**
 * The processes the conformance scenarios run on: the specification's fixtures
 * (`conformance/fixtures/`, vendored), its example, and this suite's own processes (`../processes/`),
 * each with its roles bound to the group of the same name (conformance README, "Fixtures"). No
 * vitest here: the runner's command line reads it too.
 */

/** One process to publish before the scenarios run: a folder and its role → group bindings. */
export interface Publication {
  folder: string;
  bindings?: Record<string, string>;
}

const CONFORMANCE_DIR = fileURLToPath(new URL(".", import.meta.url));

/** The specification's core conformance fixtures (conformance/README.md): a conforming server publishes all ten. */
export const CORE_FIXTURES = [
  "blog-publication",
  "contract-review",
  "customer-offboarding",
  "employee-onboarding",
  "expense-reimbursement",
  "incident-postmortem",
  "invoice-approval",
  "major-incident-response",
  "supplier-rfp",
  "support-escalation",
] as const;

/** This suite's processes that a conforming server must refuse at publication (published by their tests). */
export const REFUSED = new Set(["approval-list-next", "branches-key"]);

/**
 * The fixtures and this suite's processes that need a profile (conformance/README.md: "a server
 * publishes each one only if it offers that profile"), by the profile's `describe` name.
 */
export const PROFILE_FIXTURES: Record<string, string> = {
  "major-incident": "parallel-1",
  "vendor-check": "check-1",
};
export const PROFILE_PROCESSES: Record<string, string> = {
  "parallel-agents": "parallel-1",
  "incident-agent-comms": "parallel-1",
  "checked-review": "check-1",
  "advisory-draft": "check-1",
};

export const FIXTURES_DIR = join(CONFORMANCE_DIR, "../../../conformance/fixtures");
export const PROCESSES_DIR = join(CONFORMANCE_DIR, "../processes");
/** The specification's own example (§2), kept in the repository's samples. */
const SPEC_EXAMPLE = join(CONFORMANCE_DIR, "../../../fixtures/supplier-onboarding");

/** A conformance fixture's folder. */
export const fixture = (name: string) => join(FIXTURES_DIR, name);
/** A folder of this suite's own processes. */
export const suiteProcess = (name: string) => join(PROCESSES_DIR, name);

/** Every role of a process folder bound to a group of the same name (as `baton dev` binds its samples). */
export function sameNameBindings(folder: string): Record<string, string> {
  const parsed = parseProcess(readFileSync(join(folder, "PROCESS.md"), "utf8"));
  if (!parsed.ok) throw new Error(`${folder} does not parse`);
  return Object.fromEntries(parsed.process.roles.map((r) => [r, r]));
}

/**
 * What the untimed scenarios need published: the core fixtures, the spec's example and this suite's
 * processes (but those it must refuse), each role bound to the group of the same name.
 */
export function corePublications(): Publication[] {
  const folders = [
    ...CORE_FIXTURES.map(fixture),
    SPEC_EXAMPLE,
    ...readdirSync(PROCESSES_DIR)
      .filter((n) => !REFUSED.has(n) && PROFILE_PROCESSES[n] === undefined)
      .map(suiteProcess),
  ];
  return folders.map((folder) => ({ folder, bindings: sameNameBindings(folder) }));
}

/** The fixtures and suite processes of the profiles in `offered` (`describe.profiles`). */
export function profilePublications(offered: readonly string[]): Publication[] {
  const folders = [
    ...Object.entries(PROFILE_FIXTURES)
      .filter(([, profile]) => offered.includes(profile))
      .map(([name]) => fixture(name)),
    ...Object.entries(PROFILE_PROCESSES)
      .filter(([, profile]) => offered.includes(profile))
      .map(([name]) => suiteProcess(name)),
  ];
  return folders.map((folder) => ({ folder, bindings: sameNameBindings(folder) }));
}
