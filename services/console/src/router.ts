// Hash routes (`/ui/#/runs/r_…`): the gateway serves one index.html, and a route never reaches the server.
import { useEffect, useState } from "preact/hooks";

/** The current route's path segments, e.g. `["runs", "r_abc"]`; `[]` for the inbox. */
export function useRoute(): string[] {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const update = () => setHash(window.location.hash);
    window.addEventListener("hashchange", update);
    // Effects run after the first paint: a route changed before the listener was there still counts.
    update();
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter(Boolean)
    .map((s) => decodeURIComponent(s));
}

/** The href of a route. */
export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join("/")}`;
}

/** Goes to a route. */
export function navigate(...segments: string[]): void {
  window.location.hash = href(...segments);
}
