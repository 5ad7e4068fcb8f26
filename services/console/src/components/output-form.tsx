// The controls of a task's declared output fields (§2.3), each with its label, hint and refusals.
import type { OneOfValue } from "@baton/process";
import type { Control, FormValue, FormValues } from "../form/model.ts";
import { humanize } from "../map/model.ts";

/** The id of a field's control, and of its error text. */
export const fieldId = (name: string) => `field-${name}`;
export const errorId = (target: string) => `error-${target.replace(/[^A-Za-z0-9_-]/g, "-")}`;

/** The refusals the server gave for one target (`output.amount`, `evidence`, …), next to its control. */
export function FieldIssues({ target, issues }: { target: string; issues: readonly string[] | undefined }) {
  if (!issues || issues.length === 0) return null;
  return (
    <ul class="field-error" id={errorId(target)}>
      {issues.map((i) => (
        <li key={i}>{i}</li>
      ))}
    </ul>
  );
}

function typeHint(control: Control): string {
  const parts: string[] = [];
  if (control.description) parts.push(control.description);
  switch (control.widget) {
    case "number":
      parts.push("A number, exactly as you type it.");
      break;
    case "date":
      parts.push("A date.");
      break;
    case "datetime":
      parts.push("A date and time, in your time zone.");
      break;
    case "email":
      parts.push("A person's email address.");
      break;
    case "json":
      parts.push('A JSON object, e.g. {"key": "value"}.');
      break;
    case "list":
      parts.push(`A list of ${control.item?.type ?? "values"}s, one per line of the list.`);
      break;
  }
  return parts.join(" ");
}

const optionText = (value: OneOfValue) => (typeof value === "string" ? value : JSON.stringify(value));

function SingleInput({
  control,
  id,
  value,
  describedBy,
  invalid,
  label,
  onInput,
}: {
  control: Control;
  id: string;
  value: string;
  describedBy: string | undefined;
  invalid: boolean;
  label?: string;
  onInput: (value: string) => void;
}) {
  const common = {
    id,
    name: id,
    "aria-describedby": describedBy,
    "aria-invalid": invalid ? true : undefined,
    ...(label ? { "aria-label": label } : {}),
  };
  const input = (e: Event) => onInput((e.target as HTMLInputElement).value);
  switch (control.widget) {
    case "choice":
      return (
        <select {...common} value={value} onChange={input}>
          <option value="">{control.optional ? "(none)" : "Choose…"}</option>
          {control.options.map((o, i) => (
            <option value={String(i)} key={optionText(o)}>
              {optionText(o)}
            </option>
          ))}
        </select>
      );
    case "number":
      // Text, not type=number: the browser would reformat or drop what was typed (§2.3 numbers are exact).
      return (
        <input {...common} type="text" inputMode="decimal" autoComplete="off" value={value} onInput={input} />
      );
    case "date":
      return <input {...common} type="date" value={value} onInput={input} />;
    case "datetime":
      return <input {...common} type="datetime-local" value={value} onInput={input} />;
    case "email":
      return <input {...common} type="email" autoComplete="off" value={value} onInput={input} />;
    case "json":
      return <textarea {...common} rows={3} spellcheck={false} value={value} onInput={input} />;
    default:
      return <textarea {...common} rows={2} value={value} onInput={input} />;
  }
}

function BooleanInput({
  control,
  value,
  describedBy,
  invalid,
  onInput,
}: {
  control: Control;
  value: string;
  describedBy: string | undefined;
  invalid: boolean;
  onInput: (value: string) => void;
}) {
  const choices: [string, string][] = [
    ["true", "Yes"],
    ["false", "No"],
    ...(control.optional ? ([["", "Not given"]] as [string, string][]) : []),
  ];
  return (
    <fieldset class="field" aria-describedby={describedBy} aria-invalid={invalid ? true : undefined}>
      <legend>
        {humanize(control.name)}{" "}
        <span class="muted">
          ({control.name}
          {control.optional ? ", optional" : ""})
        </span>
      </legend>
      <div class="choices">
        {choices.map(([v, text]) => (
          <label key={v}>
            <input
              type="radio"
              name={fieldId(control.name)}
              value={v}
              checked={value === v}
              onChange={() => onInput(v)}
            />{" "}
            {text}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/**
 * One control per declared output field: `one_of` as a choice, booleans as Yes/No, numbers as typed,
 * dates, lists (add and remove items), objects as JSON, and `optional` marked. Refusals naming
 * `output.<field>` appear under the field; nothing typed is cleared.
 */
export function OutputForm({
  controls,
  values,
  issues,
  onChange,
}: {
  controls: Control[];
  values: FormValues;
  issues: Map<string, string[]>;
  onChange: (name: string, value: FormValue) => void;
}) {
  return (
    <>
      {controls.map((control) => {
        const target = `output.${control.name}`;
        const own = issues.get(target);
        const hint = typeHint(control);
        const hintId = `${fieldId(control.name)}-hint`;
        const describedBy =
          [hint ? hintId : null, own ? errorId(target) : null].filter(Boolean).join(" ") || undefined;
        const raw = values[control.name];
        if (control.widget === "boolean") {
          return (
            <div class="field-group" key={control.name}>
              <BooleanInput
                control={control}
                value={typeof raw === "string" ? raw : ""}
                describedBy={describedBy}
                invalid={!!own}
                onInput={(v) => onChange(control.name, v)}
              />
              {hint && (
                <p class="hint" id={hintId}>
                  {hint}
                </p>
              )}
              <FieldIssues target={target} issues={own} />
            </div>
          );
        }
        if (control.widget === "list") {
          const items = Array.isArray(raw) ? raw : [];
          const item = control.item as Control;
          return (
            <fieldset class="field field-group" key={control.name} aria-describedby={describedBy}>
              <legend>
                {humanize(control.name)}{" "}
                <span class="muted">
                  ({control.name}
                  {control.optional ? ", optional" : ""})
                </span>
              </legend>
              {hint && (
                <p class="hint" id={hintId}>
                  {hint}
                </p>
              )}
              <ol class="list-items">
                {items.map((text, i) => (
                  <li key={i}>
                    <SingleInput
                      control={item}
                      id={`${fieldId(control.name)}-${i}`}
                      value={text}
                      label={`${humanize(control.name)}, item ${i + 1}`}
                      describedBy={own ? errorId(target) : undefined}
                      invalid={!!own}
                      onInput={(v) =>
                        onChange(
                          control.name,
                          items.map((t, j) => (j === i ? v : t)),
                        )
                      }
                    />
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Remove item ${i + 1} of ${humanize(control.name)}`}
                      onClick={() =>
                        onChange(
                          control.name,
                          items.filter((_, j) => j !== i),
                        )
                      }
                    >
                      Remove
                    </button>
                  </li>
                ))}
              </ol>
              <button type="button" class="secondary" onClick={() => onChange(control.name, [...items, ""])}>
                Add an item to {humanize(control.name)}
              </button>
              <FieldIssues target={target} issues={own} />
            </fieldset>
          );
        }
        return (
          <div class="field" key={control.name}>
            <label for={fieldId(control.name)}>
              {humanize(control.name)}{" "}
              <span class="muted">
                ({control.name}
                {control.optional ? ", optional" : ""})
              </span>
            </label>
            {hint && (
              <p class="hint" id={hintId}>
                {hint}
              </p>
            )}
            <SingleInput
              control={control}
              id={fieldId(control.name)}
              value={typeof raw === "string" ? raw : ""}
              describedBy={describedBy}
              invalid={!!own}
              onInput={(v) => onChange(control.name, v)}
            />
            <FieldIssues target={target} issues={own} />
          </div>
        );
      })}
    </>
  );
}
