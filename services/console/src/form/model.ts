// Task forms from a step's declared output fields (§2.3), and refusals mapped to the fields they name. Pure.
import type { FieldDecl, FieldObject, Fields, FieldType, OneOfValue } from "@baton/process";
import { ExactNumber, JSON_NUMBER } from "../exact-number.ts";

/** One form control for a declared field. */
export interface Control {
  /** The field name (a top-level output field) or `""` for a list's item control. */
  name: string;
  type: FieldType;
  /** How it is edited. */
  widget: "choice" | "boolean" | "number" | "date" | "datetime" | "text" | "email" | "list" | "json";
  optional: boolean;
  description: string | null;
  /** For `choice`: the allowed values, in the declared order. */
  options: OneOfValue[];
  /** For `list`: how each item is edited. */
  item: Control | null;
}

/** What the person typed or chose: text for every control, a list of texts for a list. */
export type FormValue = string | string[];
/** Form values by field name. */
export type FormValues = Record<string, FormValue>;

function asObject(decl: FieldDecl): FieldObject {
  return typeof decl === "string" ? { type: decl } : decl;
}

function controlOf(name: string, decl: FieldDecl): Control {
  const field = asObject(decl);
  const options = field.one_of ?? [];
  const widget: Control["widget"] =
    options.length > 0
      ? "choice"
      : field.type === "boolean"
        ? "boolean"
        : field.type === "number"
          ? "number"
          : field.type === "date"
            ? "date"
            : field.type === "datetime"
              ? "datetime"
              : field.type === "person"
                ? "email"
                : field.type === "list"
                  ? "list"
                  : field.type === "object"
                    ? "json"
                    : "text";
  return {
    name,
    type: field.type,
    widget,
    optional: field.optional === true,
    description: field.description ?? null,
    options,
    item: field.type === "list" ? controlOf("", field.items ?? "string") : null,
  };
}

/** The controls of a step's `output` (§2.3), in declared order; none for `null`. */
export function controlsFor(fields: Fields | null): Control[] {
  return Object.entries(fields ?? {}).map(([name, decl]) => controlOf(name, decl));
}

/**
 * `datetime-local` gives `2026-10-06T09:30`: the person's local time. RFC 3339 needs an offset
 * (§2.3), which is the browser's at that date.
 */
export function localDateTime(value: string, offsetMinutes: number): string {
  const withSeconds = /T\d{2}:\d{2}$/.test(value) ? `${value}:00` : value;
  const sign = offsetMinutes <= 0 ? "+" : "-";
  const abs = Math.abs(offsetMinutes);
  const hh = String(Math.floor(abs / 60)).padStart(2, "0");
  const mm = String(abs % 60).padStart(2, "0");
  return `${withSeconds}${sign}${hh}:${mm}`;
}

function readValue(
  control: Control,
  text: string,
  tzOffset: (local: string) => number,
): { present: false } | { present: true; value: unknown } {
  const trimmed = text.trim();
  if (trimmed === "") return { present: false };
  switch (control.widget) {
    case "choice": {
      // The choice's value is the option's index; the option keeps its declared type.
      const option = control.options[Number(trimmed)];
      return option === undefined ? { present: true, value: trimmed } : { present: true, value: option };
    }
    case "boolean":
      return { present: true, value: trimmed === "true" ? true : trimmed === "false" ? false : trimmed };
    case "number":
      // A JSON number goes as typed, never rounded; anything else goes as text, and the server says
      // `expected number` by the field.
      return { present: true, value: JSON_NUMBER.test(trimmed) ? new ExactNumber(trimmed) : text };
    case "datetime":
      return {
        present: true,
        value: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(trimmed)
          ? localDateTime(trimmed, tzOffset(trimmed))
          : trimmed,
      };
    case "json":
      try {
        return { present: true, value: JSON.parse(trimmed) as unknown };
      } catch {
        return { present: true, value: text };
      }
    default:
      return { present: true, value: text };
  }
}

/**
 * The `output` object for a decision (§3.4 `completed`): every field the person filled, converted to
 * its declared type as typed, and nothing for a field left empty (the server then says `missing` for
 * a required one). Numbers come out as {@link ExactNumber}s. Nothing is checked here beyond reading
 * the input: every rule is the server's.
 */
export function outputOf(
  controls: Control[],
  values: FormValues,
  tzOffset: (local: string) => number = (local) => new Date(local).getTimezoneOffset(),
): Record<string, unknown> {
  const output: Record<string, unknown> = {};
  for (const control of controls) {
    const raw = values[control.name];
    if (control.widget === "list") {
      const items = (Array.isArray(raw) ? raw : []).map((t) =>
        readValue(control.item as Control, t, tzOffset),
      );
      const present = items.filter((i) => i.present).map((i) => (i as { value: unknown }).value);
      if (present.length > 0 || (Array.isArray(raw) && raw.length > 0)) output[control.name] = present;
      continue;
    }
    const v = readValue(control, typeof raw === "string" ? raw : "", tzOffset);
    if (v.present) output[control.name] = v.value;
  }
  return output;
}

/**
 * Where a refusal's issue belongs on the form: `output.<field>` (also for `output.<field>[2]` and
 * `output.<field>.x`), `evidence`, `next`, `reason`, `note`, `summary`, or `""` for the form as a
 * whole. Issues are the server's text, e.g. `output.amount: expected number` or `evidence: file required`.
 */
export function issueTarget(issue: string): string {
  const head = issue.split(": ")[0] ?? "";
  const output = /^output\.([A-Za-z_][A-Za-z0-9_]*)/.exec(head);
  if (output) return `output.${output[1]}`;
  const word = /^(evidence|next|reason|note|summary)\b/.exec(head);
  return word ? (word[1] as string) : "";
}

/** Issues grouped by {@link issueTarget}, each group in the server's order. */
export function issuesByTarget(issues: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const issue of issues) {
    const key = issueTarget(issue);
    out.set(key, [...(out.get(key) ?? []), issue]);
  }
  return out;
}
