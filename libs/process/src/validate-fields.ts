/**
 * Validating field declarations: `inputs` and a step's `output` (specification §2.3).
 *
 * Decisions where the spec is silent:
 * - Field names follow {@link FIELD_NAME_RULE}: anything the authors' schema accepts except a dot
 *   (names appear in paths), control characters and names over 128 characters.
 * - `one_of` is a non-empty list of distinct values of the field's type (`date`, `datetime` and
 *   `person` values must be valid values of that type). It is refused on `object` fields.
 * - On a `list` field, `one_of` constrains each item ("a value outside one_of is refused,
 *   including inside lists"): with `items` it needs a scalar item type and its values have that
 *   type; without `items` its values are any strings, numbers or booleans (the authors' schema).
 *   `one_of` may also sit inside the `items` field object; when both are given, an item must
 *   satisfy both.
 * - `items` is allowed only on `list` and may nest (a list of lists). An `items` field object takes
 *   the keys of a field, as the authors' schema does; `optional` there changes nothing (an item is
 *   either in the list or not, and `null` is never a value).
 * - `description` is text (it may be empty); `optional` is `true` or `false`.
 */

import { type Issues, isBad, isMap, isSeq, textOf } from "./node-access.ts";
import { FIELD_NAME_RULE, isFieldName, orList, show } from "./patterns.ts";
import { FIELD_TYPES, type FieldType } from "./types.ts";
import { isDate, isDateTime, isPersonValue } from "./values.ts";
import type { LNode } from "./yaml-tree.ts";

const TYPE_LIST = orList(FIELD_TYPES);
const FIELD_KEYS = ["type", "description", "optional", "one_of", "items"] as const;
const SCALAR_TYPES: readonly FieldType[] = ["string", "number", "boolean", "date", "datetime", "person"];

const isFieldType = (s: string | null): s is FieldType =>
  s !== null && (FIELD_TYPES as readonly string[]).includes(s);

/** What a validated map of declarations tells the rest of the validator. */
export interface DeclaredFields {
  /** Each field name mapped to its type; `null` when its declaration was refused. */
  types: Map<string, FieldType | null>;
}

function typeOfValue(type: FieldType, v: unknown): boolean {
  switch (type) {
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number";
    case "boolean":
      return typeof v === "boolean";
    case "date":
      return isDate(v);
    case "datetime":
      return isDateTime(v);
    case "person":
      return isPersonValue(v);
    default:
      return false;
  }
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);

/**
 * Checks a `one_of` list: non-empty, each value of `valueType` (or, for a list declared without
 * `items`, `null`: any string, number or boolean, as the authors' schema allows), none twice.
 */
function checkOneOf(node: LNode, valueType: FieldType | null, path: string, issues: Issues): void {
  if (isBad(node)) return;
  if (!isSeq(node) || node.items.length === 0) {
    issues.add(node, `${path}: must be a non-empty list of values`);
    return;
  }
  // A Set compares as one_of does at run time (===, with 0 and -0 the same), in linear time.
  const seen = new Set<unknown>();
  node.items.forEach((item, i) => {
    if (isBad(item)) return;
    const v = item.kind === "scalar" ? item.value : undefined;
    const fits =
      v !== undefined &&
      (valueType === null
        ? typeof v === "string" || typeof v === "number" || typeof v === "boolean"
        : typeOfValue(valueType, v));
    if (!fits) {
      const shown = item.kind === "scalar" ? show(item.value) : item.kind === "seq" ? "a list" : "a mapping";
      issues.add(
        item,
        valueType === null
          ? `${path}[${i}]: ${shown} is not a string, number or boolean; one_of on a list without items takes those`
          : `${path}[${i}]: ${shown} is not ${article(valueType)}; one_of values have the field's type`,
      );
      return;
    }
    if (seen.has(v)) issues.add(item, `${path}[${i}]: ${show(v)} is listed twice`);
    seen.add(v);
  });
}

/**
 * Validates one declaration (a type name or a field object) at `path` and returns its type, or
 * null when the declaration was refused (and reported).
 */
export function readDecl(node: LNode, path: string, issues: Issues): FieldType | null {
  if (isBad(node)) return null;
  if (node.kind === "scalar" && typeof node.value === "string") {
    if (isFieldType(node.value)) return node.value;
    issues.add(node, `${path}: unknown type ${show(node.value)}; use ${TYPE_LIST}`);
    return null;
  }
  if (!isMap(node)) {
    issues.add(node, `${path}: expected a type name or a field object with type`);
    return null;
  }
  const allowed: readonly string[] = FIELD_KEYS;
  let type: FieldType | null = null;
  let typeOk = true;
  const byKey = new Map(node.entries.map((e) => [e.key, e]));
  for (const e of node.entries) {
    if (allowed.includes(e.key)) continue;
    issues.add(e.keyPos, `${path}.${e.key}: unknown field; allowed: ${allowed.join(", ")}`);
  }
  const typeEntry = byKey.get("type");
  if (typeEntry === undefined) {
    issues.add(node, `${path}.type: required; use ${TYPE_LIST}`);
    typeOk = false;
  } else if (!isBad(typeEntry.value)) {
    const t = textOf(typeEntry.value);
    if (isFieldType(t)) type = t;
    else {
      const shown = t === null ? "" : ` ${show(t)}`;
      issues.add(typeEntry.value, `${path}.type: unknown type${shown}; use ${TYPE_LIST}`);
      typeOk = false;
    }
  } else typeOk = false;

  const description = byKey.get("description");
  if (description && !isBad(description.value) && textOf(description.value) === null) {
    issues.add(description.value, `${path}.description: expected text`);
  }
  const optional = byKey.get("optional");
  if (
    optional &&
    !isBad(optional.value) &&
    !(optional.value.kind === "scalar" && typeof optional.value.value === "boolean")
  ) {
    issues.add(optional.value, `${path}.optional: expected true or false`);
  }

  let itemType: FieldType | null = null;
  const items = byKey.get("items");
  if (items && typeOk) {
    if (type !== "list") issues.add(items.keyPos, `${path}.items: allowed only on list fields`);
    else itemType = readDecl(items.value, `${path}.items`, issues);
  }

  const oneOf = byKey.get("one_of");
  if (oneOf && type !== null) {
    if (type === "object") {
      issues.add(oneOf.keyPos, `${path}.one_of: not allowed on object fields`);
    } else if (type === "list") {
      if (items === undefined) {
        checkOneOf(oneOf.value, null, `${path}.one_of`, issues);
      } else if (itemType !== null && !SCALAR_TYPES.includes(itemType)) {
        issues.add(
          oneOf.keyPos,
          `${path}.one_of: on a list, one_of applies to each item; declare items with a scalar type (${orList(SCALAR_TYPES)})`,
        );
      } else if (itemType !== null) {
        checkOneOf(oneOf.value, itemType, `${path}.one_of`, issues);
      }
    } else {
      checkOneOf(oneOf.value, type, `${path}.one_of`, issues);
    }
  }
  return type;
}

/** Why `name` is not a field name ({@link FIELD_NAME_RULE}), in words that say what to change. */
function fieldNameProblem(name: string): string {
  if (name === "__proto__") return `"__proto__" is reserved; use another field name`;
  if (name.includes(".")) return "a field name cannot contain a dot: paths read it as two names (§2.2)";
  if (name === "") return "a field name cannot be empty";
  if ([...name].length > 128) return "a field name is at most 128 characters";
  return "a field name cannot contain control characters";
}

/**
 * Validates a map of field declarations (`inputs`, `output`) at `path`. Returns the declared
 * types, or null when the value is not a mapping at all (reported).
 */
export function readFields(node: LNode, path: string, issues: Issues): DeclaredFields | null {
  if (isBad(node)) return null;
  if (!isMap(node)) {
    issues.add(node, `${path}: expected a mapping of field name to type`);
    return null;
  }
  const types = new Map<string, FieldType | null>();
  for (const e of node.entries) {
    const fieldPath = `${path}.${e.key}`;
    if (!isFieldName(e.key)) {
      issues.add(e.keyPos, `${fieldPath}: ${fieldNameProblem(e.key)}`);
      continue;
    }
    types.set(e.key, readDecl(e.value, fieldPath, issues));
  }
  return { types };
}
