/**
 * The name patterns of PROCESS.md (specification §2.1–§2.3), in one place so the parser, the
 * value checker and their messages agree.
 */

/** `name` and `requires.systems[]` (§2.1): lowercase words joined by single hyphens, 1–64 characters. */
export const NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** Step ids (§2.2) and event names (§3.6). */
export const STEP_ID_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;
/**
 * Role names in `person:` (§2.2). The spec says only that roles are local names without dots;
 * we use the step id pattern so a role is a safe, short identifier that maps to a group.
 */
export const ROLE_PATTERN = STEP_ID_PATTERN;
/**
 * Field names in `inputs` and `output` (§2.3). The spec puts no rule on them, and the authors' schema
 * (`process-document.json`) takes any non-empty name, so a portable file may say `risk-score` or
 * `Straße`. We refuse only what cannot work: a dot (a name appears in paths, `inputs.<field>`,
 * `steps.<id>.output.<field>`, §2.2), control characters, and more than 128 characters.
 */
export const FIELD_NAME_PATTERN = /^[^.\p{Cc}]{1,128}$/u;
/** {@link NAME_PATTERN} with its length, as messages show it. */
export const NAME_RULE = "^[a-z0-9]+(-[a-z0-9]+)*$ (1–64 characters)";
/** {@link STEP_ID_PATTERN} as messages show it. */
export const STEP_ID_RULE = "^[a-z][a-z0-9_-]{0,63}$";
/** {@link FIELD_NAME_PATTERN} as messages show it. */
export const FIELD_NAME_RULE = "1–128 characters, no dot and no control characters";

/** True when `s` is a valid process `name` or system name (§2.1). */
export function isProcessName(s: unknown): s is string {
  return typeof s === "string" && s.length >= 1 && s.length <= 64 && NAME_PATTERN.test(s);
}

/** True when `s` is a valid step id (§2.2); also the event name rule (§3.6). */
export function isStepId(s: unknown): s is string {
  return typeof s === "string" && STEP_ID_PATTERN.test(s);
}

/**
 * True when `s` is a valid field name. `__proto__` is refused as well: a field name becomes a key
 * of plain JavaScript objects everywhere downstream, and that one key is not an ordinary property.
 */
export function isFieldName(s: unknown): s is string {
  return typeof s === "string" && FIELD_NAME_PATTERN.test(s) && s !== "__proto__";
}

/** A value quoted for a message: JSON for strings (cut to 60 characters), `String` otherwise. */
export function show(value: unknown): string {
  if (typeof value === "string") {
    // Never cut a surrogate pair in two: half a pair would show as an escape of nothing.
    const high = value.charCodeAt(56);
    const end = high >= 0xd800 && high <= 0xdbff ? 56 : 57;
    const cut = value.length > 60 ? `${value.slice(0, end)}…` : value;
    return JSON.stringify(cut);
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  return String(value);
}

/** `a, b or c` for messages. */
export function orList(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}
