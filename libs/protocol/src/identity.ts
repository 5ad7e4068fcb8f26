/**
 * Who is calling (ARCHITECTURE "Identity"): the verified bearer token's claims, reduced to what the
 * protocol needs. `id` is the JWT `sub`: an agent id, or the person's email (`describe.person.format`).
 */
export interface Identity {
  org: string;
  kind: "agent" | "person";
  id: string;
  /** Group ids (the same ids `--bind role=group` uses). */
  groups: string[];
  /** `roles` contains `operator` (§3.5 cancel, §3.6 send_event, the escalation queue). */
  operator: boolean;
}
