// Small pieces every page uses: times, states, refusals, loading.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { Loaded } from "./context.ts";

/** An RFC 3339 time, shown in the reader's locale, with the exact value for machines. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span>—</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={at}>
      {Number.isNaN(date.getTime())
        ? at
        : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" })}
    </time>
  );
}

/** A state or outcome word as a badge. */
export function Badge({ tone, children }: { tone?: string | undefined; children: ComponentChildren }) {
  return <span class={`badge ${tone ? `badge-${tone}` : ""}`}>{children}</span>;
}

/** The "test run" mark (§3.3: people are told the run is a test). */
export function TestMark({ mode }: { mode: string | undefined }) {
  return mode === "test" ? <Badge tone="test">Test run</Badge> : null;
}

/** A list of the server's issues. */
export function IssueList({ issues, id }: { issues: readonly string[]; id?: string }) {
  if (issues.length === 0) return null;
  return (
    <ul class="issues" id={id}>
      {issues.map((i) => (
        <li key={i}>{i}</li>
      ))}
    </ul>
  );
}

/** A refusal or failure, announced to screen readers, focused when it appears. */
export function ErrorBox({
  title,
  message,
  issues = [],
}: {
  title: string;
  message: string;
  issues?: string[];
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), [title, message]);
  return (
    <div class="error-box" role="alert" tabIndex={-1} ref={ref}>
      <p>
        <strong>{title}</strong> {message}
      </p>
      <IssueList issues={issues} />
    </div>
  );
}

/** Renders a load: a status line while loading, the error, or `children(data)`. */
export function Loading<T>({
  loaded,
  children,
}: {
  loaded: Loaded<T>;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.state === "loading") return <p role="status">Loading…</p>;
  if (loaded.state === "error") {
    const title = loaded.code === "not_found" ? "Not found." : "Could not load this.";
    return <ErrorBox title={title} message={loaded.message} issues={loaded.issues} />;
  }
  return <>{children(loaded.data)}</>;
}

/** A page's title, also the document's. Focused on navigation so screen readers announce the page. */
export function PageTitle({ children, text }: { children: ComponentChildren; text: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${text} · Baton`;
    ref.current?.focus();
  }, [text]);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** A value from run data, readable: text as is, everything else as JSON. */
export function Value({ value }: { value: unknown }) {
  if (typeof value === "string") return <span class="value">{value}</span>;
  return <code class="value">{JSON.stringify(value)}</code>;
}

/** Whether a reference is a web address a link can open. */
export function isWebLink(ref: string): boolean {
  return /^https?:\/\//i.test(ref);
}
