// The inbox: the person's open work items (get_work, §3.4), oldest first.
import type { Page, PersonWorkItem, WorkItem } from "@baton/protocol";
import { useState } from "preact/hooks";
import { useCalls, useLoad, useSession } from "../context.ts";
import { humanize } from "../map/model.ts";
import { href } from "../router.ts";
import { Badge, ErrorBox, Loading, PageTitle, TestMark, Time } from "../ui.tsx";

/** Who a work item is assigned to, as words. */
export function assignee(item: WorkItem): string {
  return "group" in item.assignedTo ? `Group ${item.assignedTo.group}` : String(item.assignedTo.person);
}

/** What kind of decision a work item asks for. */
export function itemKind(item: WorkItem): string {
  if (item.escalation) return "Escalated";
  return item.kind === "approve" ? "Approval" : item.kind === "task" ? "Task" : "Agent step";
}

/** Due and overdue (§2.2 `due`): overdue when the due time has passed. */
export function Due({ due }: { due: string | null }) {
  if (!due) return <span class="muted">No due date</span>;
  const overdue = new Date(due).getTime() < Date.now();
  return (
    <span>
      Due <Time at={due} /> {overdue && <Badge tone="overdue">Overdue</Badge>}
    </span>
  );
}

/** The inbox page. */
export function Inbox() {
  const calls = useCalls();
  const session = useSession();
  const [cursor, setCursor] = useState<string | null>(null);
  const [loaded, reload] = useLoad(
    () => calls.tool<Page<PersonWorkItem>>("get_work", { limit: 50, ...(cursor ? { cursor } : {}) }),
    `inbox:${cursor}`,
  );
  return (
    <>
      <PageTitle text="Inbox">Inbox</PageTitle>
      {session.me.kind === "agent" && (
        <ErrorBox
          title="This is an agent's token."
          message="The inbox lists work for people; an agent claims steps over MCP instead."
        />
      )}
      <p class="toolbar">
        <button type="button" class="secondary" onClick={() => void reload()}>
          Refresh
        </button>
      </p>
      <Loading loaded={loaded}>
        {(page) =>
          page.items.length === 0 ? (
            <p>Nothing waits on you. Work assigned to you or your groups appears here.</p>
          ) : (
            <>
              <ul class="cards" aria-label="Your open work">
                {page.items.map((entry) => (
                  <InboxItem entry={entry} key={entry.workItem.id} />
                ))}
              </ul>
              {(cursor || page.nextCursor) && (
                <p class="toolbar">
                  {cursor && (
                    <button type="button" class="secondary" onClick={() => setCursor(null)}>
                      First page
                    </button>
                  )}
                  {page.nextCursor && (
                    <button type="button" class="secondary" onClick={() => setCursor(page.nextCursor)}>
                      Next page
                    </button>
                  )}
                </p>
              )}
            </>
          )
        }
      </Loading>
    </>
  );
}

function InboxItem({ entry }: { entry: PersonWorkItem }) {
  const item = entry.workItem;
  return (
    <li class="card inbox-item">
      <h2>
        <a href={href("work", entry.runId, item.id)}>
          {itemKind(item)}: {humanize(item.stepId)}
        </a>
      </h2>
      <p class="meta">
        <span>
          {entry.process} v{entry.version}
        </span>
        <span>
          Run <a href={href("runs", entry.runId)}>{entry.runId}</a>
        </span>
        <span>Assigned to {assignee(item)}</span>
        <Due due={item.due} />
        <TestMark mode={entry.mode} />
      </p>
      <p class="excerpt">{item.text}</p>
    </li>
  );
}
