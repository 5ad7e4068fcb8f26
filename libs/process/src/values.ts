/**
 * Checking values against field declarations (specification §2.3, §6 rule 3), with issues in the
 * style of the tool contracts (`output.cleared: expected boolean`, `output.extra: not declared`).
 */

import { show } from "./patterns.ts";
import type { FieldDecl, FieldObject, Fields, FieldType, OneOfValue } from "./types.ts";

const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
// RFC 3339 §5.6. Its ABNF is case-insensitive, so `t` and `z` are accepted like `T` and `Z`;
// the space separator some applications use is not RFC 3339's grammar and is refused.
const DATE_TIME =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$/;

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeapYear(y) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

function validYmd(y: number, m: number, d: number): boolean {
  return m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/**
 * True when `s` is a `date` value (§2.3): `YYYY-MM-DD` naming a real day of the proleptic
 * Gregorian calendar (`2026-02-30` is refused, `2024-02-29` accepted, `2100-02-29` refused).
 */
export function isDate(s: unknown): s is string {
  if (typeof s !== "string") return false;
  const m = DATE.exec(s);
  return m !== null && validYmd(Number(m[1]), Number(m[2]), Number(m[3]));
}

/**
 * A fraction of a second (`.9565`, or undefined for none) in whole milliseconds, rounded toward
 * later: `.9565` → 957, `.956` → 956, `.9990001` → 1000 (the next second; the caller adds it to
 * whole seconds, so that carries). Exact on any number of digits: no floating point.
 */
function fractionMs(fraction: string | undefined): number {
  if (fraction === undefined) return 0;
  const digits = fraction.slice(1);
  const ms = Number(digits.slice(0, 3).padEnd(3, "0"));
  return /[1-9]/.test(digits.slice(3)) ? ms + 1 : ms;
}

/**
 * Epoch ms as RFC 3339 in UTC with milliseconds (`2026-10-06T09:00:00.000Z`): the one way Baton
 * writes a time, the inverse of {@link parseDateTime}.
 */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Parses a `datetime` value (§2.3) into epoch milliseconds, or `null` when it is not one.
 *
 * A datetime is RFC 3339 `date-time` with a required offset: `2026-10-06T09:00:00Z`,
 * `2026-10-06T09:00:00.25+05:30`. `T`/`t` and `Z`/`z` are both accepted (RFC 3339's ABNF is
 * case-insensitive); `-00:00` is accepted. Every field must be real: month 01–12, a day that exists
 * in that month, hour 00–23, minute 00–59, second 00–59, offset hours 00–23 and minutes 00–59.
 * A leap second (`:60`) is refused: without a leap-second table it cannot be told from a typo, and
 * no epoch-millisecond clock can hold it. A fraction of any length is allowed; an instant between
 * two milliseconds is rounded toward later (`…00.9565Z` is `…00.957Z`), never toward the past, so a
 * deadline read from it never fires before its instant (issue #8; docs/decisions.md). This is the
 * one place Baton turns an RFC 3339 text into a time: every `wait_until` and any other deadline read
 * from run data or a process goes through it.
 */
export function parseDateTime(s: string): number | null {
  if (typeof s !== "string") return null;
  const m = DATE_TIME.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (!validYmd(y, mo, d) || h > 23 || mi > 59 || sec > 59) return null;
  let offsetMin = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const seconds = daysFromCivil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offsetMin * 60;
  return seconds * 1000 + fractionMs(m[7]);
}

/** True when `s` is a `datetime` value (§2.3); see {@link parseDateTime} for the exact grammar. */
export function isDateTime(s: unknown): s is string {
  return typeof s === "string" && parseDateTime(s) !== null;
}

/**
 * True when `s` is a `person` value. The form is server-defined (§2.3); Baton's is an email address
 * (`describe.person.format` is `email`). The check is deliberately simple, not RFC 5322: at most 254
 * characters, no whitespace or control characters, exactly one `@` with a non-empty local part,
 * and a domain of two or more non-empty dot-separated labels (`mira@example.com`).
 */
export function isPersonValue(s: unknown): s is string {
  if (typeof s !== "string" || s.length > 254) return false;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\s\u0000-\u001f\u007f]/.test(s)) return false;
  const at = s.indexOf("@");
  if (at <= 0 || at !== s.lastIndexOf("@")) return false;
  const labels = s.slice(at + 1).split(".");
  return labels.length >= 2 && labels.every((l) => l.length > 0);
}

/**
 * The long form of a field declaration (§2.3): a bare type name `t` becomes `{ type: t }`, and
 * `items` is normalized the same way, recursively. Other keys are kept as written.
 */
export function normalizeField(decl: FieldDecl): FieldObject {
  if (typeof decl === "string") return { type: decl };
  const out: FieldObject = { ...decl };
  if (decl.items !== undefined) out.items = normalizeField(decl.items);
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function showOneOf(values: readonly OneOfValue[]): string {
  return values.map((v) => String(v)).join(", ");
}

/** The problem with a non-null value of type `type`, or null when it has that type. */
function typeProblem(type: FieldType, value: unknown): string | null {
  switch (type) {
    case "string":
      return typeof value === "string" ? null : "expected string";
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "expected number";
    case "boolean":
      return typeof value === "boolean" ? null : "expected boolean";
    case "date":
      if (typeof value !== "string") return "expected date (YYYY-MM-DD)";
      return isDate(value) ? null : `${show(value)} is not a date; use YYYY-MM-DD, a real calendar date`;
    case "datetime":
      if (typeof value !== "string") return "expected datetime (RFC 3339 with offset)";
      return isDateTime(value)
        ? null
        : `${show(value)} is not a datetime; use RFC 3339 with an offset, e.g. 2026-10-06T09:00:00Z`;
    case "person":
      if (typeof value !== "string") return "expected person (an email address)";
      return isPersonValue(value) ? null : `${show(value)} is not a person; use an email address`;
    case "list":
      return Array.isArray(value) ? null : "expected list";
    case "object":
      return isPlainObject(value) ? null : "expected object";
    default: {
      const never: never = type;
      return `unknown type ${show(never)}`;
    }
  }
}

function checkOneOf(oneOf: readonly OneOfValue[] | undefined, value: unknown, path: string, out: string[]) {
  if (oneOf === undefined) return;
  if (!oneOf.some((v) => v === value)) out.push(`${path}: ${show(value)} is not one of ${showOneOf(oneOf)}`);
}

/**
 * The items of a list declared without `items`: any JSON value but `null` (§2.3 "null is not a
 * value" holds for an item as for a field, at any depth of nested lists; inside an `object` the
 * content is the author's free JSON and kept as given), each one of `oneOf` when declared.
 */
function checkListItems(items: unknown[], path: string, out: string[], oneOf?: readonly OneOfValue[]) {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const at = `${path}[${i}]`;
    if (item === null) out.push(`${at}: null is not a value`);
    else if (oneOf !== undefined) checkOneOf(oneOf, item, at, out);
    else if (Array.isArray(item)) checkListItems(item, at, out);
  }
}

function checkInto(
  decl: FieldDecl,
  value: unknown,
  path: string,
  out: string[],
  listOneOf?: readonly OneOfValue[],
) {
  const field = normalizeField(decl);
  if (value === null) {
    out.push(
      field.optional === true
        ? `${path}: null is not a value; omit an optional field instead`
        : `${path}: null is not a value; expected ${field.type}`,
    );
    return;
  }
  const problem = typeProblem(field.type, value);
  if (problem !== null) {
    out.push(`${path}: ${problem}`);
    return;
  }
  if (field.type === "list") {
    const items = value as unknown[];
    if (field.items !== undefined) {
      for (let i = 0; i < items.length; i++) {
        checkInto(field.items, items[i], `${path}[${i}]`, out, field.one_of);
      }
    } else {
      checkListItems(items, path, out, field.one_of);
    }
    return;
  }
  checkOneOf(field.one_of, value, path, out);
  checkOneOf(listOneOf, value, path, out);
}

/**
 * Checks one value against one field declaration (§2.3, §6 rule 3) and returns every issue,
 * each as `<path>: <problem>` (`output.total: expected number`); empty when the value is valid.
 *
 * - `null` is never a value. `undefined` is treated like any other non-value (`expected <type>`);
 *   presence is {@link checkValues}' business.
 * - `number` is a finite JavaScript number, taken as it is (never rounded); `object` is a plain
 *   JSON object (not an array, not null) whose content is free JSON; `list` is an array, and when
 *   `items` is declared every item is checked against it at `<path>[i]`; without `items` an item
 *   may be any value but `null`, at any depth of nested lists.
 * - `one_of` (a list of values of the field's type) is compared with `===`: a `datetime` in
 *   `one_of` matches only the same text, not the same instant. On a `list` field, `one_of`
 *   constrains each item ("including inside lists"); an `items` field object may carry its own.
 */
export function checkValue(decl: FieldDecl, value: unknown, path: string): string[] {
  const out: string[] = [];
  checkInto(decl, value, path, out);
  return out;
}

/**
 * Checks an object of values (`inputs`, a submission's `output`, §2.3) against its declarations
 * and returns every issue, in declaration order, then undeclared fields in the order given:
 * `<prefix>.<field>: missing` for an absent required field (an optional one may be omitted),
 * `<prefix>.<field>: not declared` for an extra one, plus {@link checkValue}'s issues.
 * A `value` that is not a plain object gives the single issue `<prefix>: expected object`.
 * An empty `prefix` gives bare field names (`summary: missing`).
 */
export function checkValues(fields: Fields, value: unknown, prefix: string): string[] {
  const at = (name: string) => (prefix === "" ? name : `${prefix}.${name}`);
  if (!isPlainObject(value)) return [`${prefix === "" ? "value" : prefix}: expected object`];
  const out: string[] = [];
  for (const [name, decl] of Object.entries(fields)) {
    const present = Object.hasOwn(value, name) && value[name] !== undefined;
    if (!present) {
      if (normalizeField(decl).optional !== true) out.push(`${at(name)}: missing`);
      continue;
    }
    checkInto(decl, value[name], at(name), out);
  }
  for (const name of Object.keys(value)) {
    if (!Object.hasOwn(fields, name)) out.push(`${at(name)}: not declared`);
  }
  return out;
}
