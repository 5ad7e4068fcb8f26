// Evidence for a decision (§5): files uploaded with the `upload` tool, and links recorded as stated.
import type { UploadResult } from "@baton/protocol";
import { useState } from "preact/hooks";
import { useCalls } from "../context.ts";
import { errorId, FieldIssues } from "./output-form.tsx";

/** An evidence item the person attached, with what to show for it. */
export interface AttachedEvidence {
  kind: "file" | "link";
  ref: string;
  /** The file's name, or the link itself. */
  label: string;
}

function base64Of(bytes: ArrayBuffer): string {
  const view = new Uint8Array(bytes);
  let binary = "";
  for (let i = 0; i < view.length; i += 0x8000)
    binary += String.fromCharCode(...view.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Attaching evidence: a file goes up at once with `upload` (its id becomes a `file` item), a link or
 * document number becomes a `link` item. `required` lists the kinds the step requires (shown, not
 * enforced here: the server says `evidence: file required` when one is missing).
 */
export function EvidenceInput({
  items,
  required,
  issues,
  onChange,
}: {
  items: AttachedEvidence[];
  required: readonly string[];
  issues: string[] | undefined;
  onChange: (items: AttachedEvidence[]) => void;
}) {
  const calls = useCalls();
  const [link, setLink] = useState("");
  const [uploading, setUploading] = useState<string | null>(null);
  const [uploadError, setUploadError] = useState<string[] | null>(null);

  async function upload(input: HTMLInputElement) {
    const files = [...(input.files ?? [])];
    input.value = "";
    const added: AttachedEvidence[] = [];
    setUploadError(null);
    for (const file of files) {
      setUploading(file.name);
      const result = await calls.tool<UploadResult>("upload", {
        fileName: file.name,
        contentType: file.type || "application/octet-stream",
        contentBase64: base64Of(await file.arrayBuffer()),
        requestId: crypto.randomUUID(),
      });
      if (result.ok) added.push({ kind: "file", ref: result.data.id, label: file.name });
      else setUploadError([`${file.name}: ${result.error.message}`, ...(result.error.issues ?? [])]);
    }
    setUploading(null);
    if (added.length > 0) onChange([...items, ...added]);
  }

  return (
    <fieldset class="field field-group" aria-describedby={issues ? errorId("evidence") : undefined}>
      <legend>Evidence {required.length > 0 ? `(required: ${required.join(", ")})` : "(optional)"}</legend>
      {items.length > 0 && (
        <ul class="attached" aria-label="Attached evidence">
          {items.map((e, i) => (
            <li key={`${e.kind}:${e.ref}`}>
              <span class="badge">{e.kind}</span> {e.label}
              {e.kind === "file" && <span class="muted"> ({e.ref})</span>}{" "}
              <button
                type="button"
                class="secondary"
                aria-label={`Remove ${e.label}`}
                onClick={() => onChange(items.filter((_, j) => j !== i))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="field">
        <label for="evidence-file">Attach a file</label>
        <input
          id="evidence-file"
          type="file"
          multiple
          disabled={uploading !== null}
          onChange={(e) => void upload(e.target as HTMLInputElement)}
        />
        {uploading && <p role="status">Uploading {uploading}…</p>}
        {uploadError && (
          <ul class="field-error" role="alert">
            {uploadError.map((m) => (
              <li key={m}>{m}</li>
            ))}
          </ul>
        )}
      </div>
      <div class="field inline">
        <label for="evidence-link">Link or document number</label>
        <input
          id="evidence-link"
          type="text"
          value={link}
          onInput={(e) => setLink((e.target as HTMLInputElement).value)}
        />
        <button
          type="button"
          class="secondary"
          disabled={link.trim() === ""}
          onClick={() => {
            onChange([...items, { kind: "link", ref: link.trim(), label: link.trim() }]);
            setLink("");
          }}
        >
          Add link
        </button>
      </div>
      <FieldIssues target="evidence" issues={issues} />
    </fieldset>
  );
}
