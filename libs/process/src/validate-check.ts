/**
 * Validating the `check` key of the check profile (profiles/check.md §2): the short form (one
 * yes/no question as text) or a list of questions, each a yes/no question, a choice (`one_of`) or a
 * rubric (`levels`).
 *
 * Decisions where the profile is silent:
 * - Probabilities and confidences (`pass` and `fail` of yes/no, `confidence`) are numbers in [0, 1];
 *   when a yes/no question gives both, `fail` must be below `pass` (equal would leave no unsure band
 *   and says the author confused them). With only `fail`, it is compared with the server default at
 *   run time, not here.
 * - A choice's answer names are non-empty; `pass` lists at least one of them, each once; `unsure`
 *   may be empty; no name is both in `pass` and in `unsure`.
 * - A rubric's `pass` is an integer level 0 … levels−1; each level is non-empty text.
 * - Keys of another kind are refused with the kind they belong to (`fail` on a choice,
 *   `confidence` on a yes/no question, `unsure` on a rubric).
 * - A question with both `one_of` and `levels` is refused, and both are still checked, with `pass`
 *   read as answer names when it is a list and as a level otherwise, so no other issue hides.
 * - A message lists at most ten answer names of a `one_of`, then how many there are.
 */

import { formatCount } from "./issue-limits.ts";
import { type Issues, isBad, isMap, isNonBlank, isSeq, numberOf, textOf } from "./node-access.ts";
import { orList, show } from "./patterns.ts";
import type { LEntry, LMap, LNode } from "./yaml-tree.ts";

const QUESTION_KEYS = ["ask", "pass", "fail", "one_of", "unsure", "levels", "confidence"] as const;
const FORM = "must be a question (text) or a list of questions";

const isProbability = (n: number | null): n is number => n !== null && n >= 0 && n <= 1;

function probability(entry: LEntry | undefined, path: string, issues: Issues): number | null {
  if (entry === undefined || isBad(entry.value)) return null;
  const n = numberOf(entry.value);
  if (!isProbability(n)) {
    issues.add(entry.value, `${path}: must be a number from 0 to 1`);
    return null;
  }
  return n;
}

/** At most this many answer names are listed in a message; the rest are counted. */
const NAMES_SHOWN = 10;

/** The answers of a `one_of`, for messages: `a, b or c`, or the first few and how many in all. */
function answerList(names: readonly string[]): string {
  if (names.length <= NAMES_SHOWN) return orList(names);
  return `${names.slice(0, NAMES_SHOWN).join(", ")}, … (${formatCount(names.length)} answers)`;
}

/** The answer names of a choice, as a set and as a message text (made once, on first use). */
interface Answers {
  set: ReadonlySet<string>;
  list: readonly string[];
  text: string | null;
}

/** Validates a list of answer names (`pass`, `unsure` of a choice); returns the valid names. */
function answerNames(
  entry: LEntry,
  path: string,
  answers: Answers | null,
  issues: Issues,
  minimum: number,
  /** Names already used by `pass`; an `unsure` name may not repeat one. */
  passing: ReadonlySet<string> = new Set(),
): Set<string> {
  const value = entry.value;
  const out = new Set<string>();
  if (isBad(value)) return out;
  if (!isSeq(value) || value.items.length < minimum) {
    issues.add(
      value,
      minimum > 0
        ? `${path}: must list at least one answer name from one_of`
        : `${path}: must be a list of answer names from one_of`,
    );
    return out;
  }
  value.items.forEach((item, j) => {
    if (isBad(item)) return;
    const name = textOf(item);
    if (name === null) {
      issues.add(item, `${path}[${j}]: expected an answer name from one_of`);
    } else if (answers !== null && !answers.set.has(name)) {
      answers.text ??= answerList(answers.list);
      issues.add(item, `${path}[${j}]: ${show(name)} is not an answer in one_of; use ${answers.text}`);
    } else if (out.has(name)) {
      issues.add(item, `${path}[${j}]: ${show(name)} is listed twice`);
    } else if (passing.has(name)) {
      issues.add(
        item,
        `${path}[${j}]: ${show(name)} is also in pass; an answer passes or is unsure, not both`,
      );
    } else out.add(name);
  });
  return out;
}

function notOn(entry: LEntry | undefined, path: string, key: string, reason: string, issues: Issues) {
  if (entry !== undefined) issues.add(entry.keyPos, `${path}.${key}: ${reason}`);
}

/** Validates a choice's `one_of` map; returns its answer names, or null when it is refused. */
function readChoices(oneOf: LEntry, path: string, issues: Issues): Answers | null {
  const v = oneOf.value;
  if (isBad(v)) return null;
  if (!isMap(v) || v.entries.length < 2) {
    issues.add(v, `${path}.one_of: must map two or more answer names to descriptions`);
    return null;
  }
  const list: string[] = [];
  for (const e of v.entries) {
    if (e.key.trim() === "") issues.add(e.keyPos, `${path}.one_of: answer names must be non-empty`);
    else list.push(e.key);
    if (!isBad(e.value) && !isNonBlank(textOf(e.value))) {
      issues.add(e.value, `${path}.one_of.${e.key}: must be a description (non-empty text)`);
    }
  }
  return { set: new Set(list), list, text: null };
}

/** Validates a rubric's `levels` list; returns how many levels it has, or null when it is refused. */
function readLevels(levels: LEntry, path: string, issues: Issues): number | null {
  const v = levels.value;
  if (isBad(v)) return null;
  if (!isSeq(v) || v.items.length < 2 || v.items.length > 10) {
    issues.add(v, `${path}.levels: must be a list of 2–10 level descriptions, worst first`);
    return null;
  }
  v.items.forEach((item, j) => {
    if (!isBad(item) && !isNonBlank(textOf(item))) {
      issues.add(item, `${path}.levels[${j}]: must be a level description (non-empty text)`);
    }
  });
  return v.items.length;
}

/** Validates a rubric's `pass` (present), a level 0 … count−1. */
function levelPass(pass: LEntry, path: string, count: number | null, issues: Issues): void {
  if (isBad(pass.value)) return;
  const n = numberOf(pass.value);
  const inRange = n !== null && Number.isInteger(n) && n >= 0 && (count === null || n < count);
  if (!inRange) {
    const range = count === null ? "a 0-based level number" : `a level number from 0 to ${count - 1}`;
    issues.add(pass.value, `${path}.pass: must be ${range}`);
  }
}

function readQuestion(node: LMap, path: string, issues: Issues): void {
  const byKey = new Map(node.entries.map((e) => [e.key, e]));
  for (const e of node.entries) {
    if (!(QUESTION_KEYS as readonly string[]).includes(e.key)) {
      issues.add(e.keyPos, `${path}.${e.key}: unknown field; allowed: ${QUESTION_KEYS.join(", ")}`);
    }
  }
  const ask = byKey.get("ask");
  if (ask === undefined) issues.add(node, `${path}.ask: required; the question, in plain language`);
  else if (!isBad(ask.value) && !isNonBlank(textOf(ask.value)))
    issues.add(ask.value, `${path}.ask: must be non-empty text`);

  const oneOf = byKey.get("one_of");
  const levels = byKey.get("levels");
  const pass = byKey.get("pass");

  if (oneOf && levels) {
    // Both forms: say so, and still check everything that does not depend on which one is meant
    // (every issue at once). `pass` is checked against the form its value fits: a list names
    // answers of one_of, anything else is a level.
    issues.add(node, `${path}: use one_of (a choice) or levels (a rubric), not both`);
    notOn(byKey.get("fail"), path, "fail", "allowed only on a yes/no question", issues);
    const answers = readChoices(oneOf, path, issues);
    const count = readLevels(levels, path, issues);
    let passing: ReadonlySet<string> = new Set();
    if (pass === undefined) {
      issues.add(
        node,
        `${path}.pass: required; the answer names that pass (a choice) or the 0-based level at or above which the answer passes (a rubric)`,
      );
    } else if (isSeq(pass.value)) {
      passing = answerNames(pass, `${path}.pass`, answers, issues, 1);
    } else levelPass(pass, path, count, issues);
    const unsure = byKey.get("unsure");
    if (unsure) answerNames(unsure, `${path}.unsure`, answers, issues, 0, passing);
    probability(byKey.get("confidence"), `${path}.confidence`, issues);
    return;
  }

  if (oneOf) {
    notOn(
      byKey.get("fail"),
      path,
      "fail",
      "allowed only on a yes/no question (a choice fails on any answer not in pass or unsure)",
      issues,
    );
    const answers = readChoices(oneOf, path, issues);
    const passing =
      pass === undefined ? new Set<string>() : answerNames(pass, `${path}.pass`, answers, issues, 1);
    if (pass === undefined)
      issues.add(node, `${path}.pass: required on a choice; list the answer names that pass`);
    const unsure = byKey.get("unsure");
    if (unsure) answerNames(unsure, `${path}.unsure`, answers, issues, 0, passing);
    probability(byKey.get("confidence"), `${path}.confidence`, issues);
    return;
  }

  if (levels) {
    notOn(byKey.get("fail"), path, "fail", "allowed only on a yes/no question", issues);
    notOn(byKey.get("unsure"), path, "unsure", "allowed only on a choice (one_of) question", issues);
    const count = readLevels(levels, path, issues);
    if (pass === undefined) {
      issues.add(
        node,
        `${path}.pass: required on a rubric; the 0-based level at or above which the answer passes`,
      );
    } else levelPass(pass, path, count, issues);
    probability(byKey.get("confidence"), `${path}.confidence`, issues);
    return;
  }

  // A yes/no question.
  notOn(byKey.get("unsure"), path, "unsure", "allowed only on a choice (one_of) question", issues);
  notOn(
    byKey.get("confidence"),
    path,
    "confidence",
    "allowed only on choice and rubric questions; a yes/no answer is already a probability",
    issues,
  );
  const passP = probability(pass, `${path}.pass`, issues);
  const fail = byKey.get("fail");
  const failP = probability(fail, `${path}.fail`, issues);
  if (fail && passP !== null && failP !== null && failP >= passP) {
    issues.add(fail.value, `${path}.fail: must be below pass (${passP})`);
  }
}

/** Validates a step's `check` value at `path` (profiles/check.md §2), reporting every problem. */
export function readCheck(node: LNode, path: string, issues: Issues): void {
  if (isBad(node)) return;
  if (node.kind === "scalar" && typeof node.value === "string") {
    if (!isNonBlank(node.value)) issues.add(node, `${path}: ${FORM}`);
    return;
  }
  if (!isSeq(node)) {
    issues.add(node, `${path}: ${FORM}`);
    return;
  }
  if (node.items.length === 0) {
    issues.add(node, `${path}: a list needs at least one question`);
    return;
  }
  node.items.forEach((item, i) => {
    if (isBad(item)) return;
    if (!isMap(item)) issues.add(item, `${path}[${i}]: expected a question with ask`);
    else readQuestion(item, `${path}[${i}]`, issues);
  });
}
