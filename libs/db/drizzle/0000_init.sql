CREATE TABLE "drafts" (
	"id" text PRIMARY KEY NOT NULL,
	"org" text NOT NULL,
	"name" text NOT NULL,
	"folder_name" text,
	"source" text NOT NULL,
	"bindings" jsonb NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "files" (
	"org" text NOT NULL,
	"id" text NOT NULL,
	"sha256" text NOT NULL,
	"bytes" bigint NOT NULL,
	"content_type" text NOT NULL,
	"file_name" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "files_org_id_pk" PRIMARY KEY("org","id")
);
--> statement-breakpoint
CREATE TABLE "idempotency" (
	"org" text NOT NULL,
	"request_id" text NOT NULL,
	"tool" text NOT NULL,
	"fingerprint" text NOT NULL,
	"result" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "idempotency_org_request_id_pk" PRIMARY KEY("org","request_id")
);
--> statement-breakpoint
CREATE TABLE "outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"org" text NOT NULL,
	"subject" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"published_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "process_versions" (
	"org" text NOT NULL,
	"name" text NOT NULL,
	"version" integer NOT NULL,
	"content_hash" text NOT NULL,
	"source" text NOT NULL,
	"definition" jsonb NOT NULL,
	"bindings" jsonb NOT NULL,
	"published_by" text NOT NULL,
	"published_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "process_versions_org_name_version_pk" PRIMARY KEY("org","name","version")
);
--> statement-breakpoint
CREATE TABLE "ready_steps" (
	"run_id" text NOT NULL,
	"step_id" text NOT NULL,
	"org" text NOT NULL,
	"process" text NOT NULL,
	"version" integer NOT NULL,
	"mode" text NOT NULL,
	"ready_since" timestamp (3) with time zone NOT NULL,
	"due_at" timestamp (3) with time zone,
	"lease_expires_at" timestamp (3) with time zone,
	"progress" text,
	"handoff" jsonb,
	CONSTRAINT "ready_steps_run_id_step_id_pk" PRIMARY KEY("run_id","step_id")
);
--> statement-breakpoint
CREATE TABLE "run_journal" (
	"run_id" text NOT NULL,
	"rev" integer NOT NULL,
	"org" text NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"actor" text NOT NULL,
	"actor_kind" text NOT NULL,
	"command" text NOT NULL,
	"request_id" text,
	"process" text NOT NULL,
	"version" integer NOT NULL,
	"content_hash" text NOT NULL,
	"detail" jsonb NOT NULL,
	CONSTRAINT "run_journal_run_id_rev_pk" PRIMARY KEY("run_id","rev")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"org" text NOT NULL,
	"process" text NOT NULL,
	"version" integer NOT NULL,
	"mode" text NOT NULL,
	"state" text NOT NULL,
	"outcome" text,
	"started_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"inputs" jsonb NOT NULL,
	"snapshot" text NOT NULL,
	"rev" integer NOT NULL,
	"partition" integer NOT NULL,
	"doc" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "timers" (
	"run_id" text NOT NULL,
	"kind" text NOT NULL,
	"step_id" text NOT NULL,
	"org" text NOT NULL,
	"partition" integer NOT NULL,
	"fire_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "timers_run_id_kind_step_id_pk" PRIMARY KEY("run_id","kind","step_id")
);
--> statement-breakpoint
CREATE TABLE "work_items" (
	"run_id" text NOT NULL,
	"work_item_id" text NOT NULL,
	"org" text NOT NULL,
	"process" text NOT NULL,
	"version" integer NOT NULL,
	"mode" text NOT NULL,
	"group_id" text,
	"person" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"item" jsonb NOT NULL,
	CONSTRAINT "work_items_run_id_work_item_id_pk" PRIMARY KEY("run_id","work_item_id")
);
--> statement-breakpoint
CREATE INDEX "drafts_org_name" ON "drafts" USING btree ("org","name");--> statement-breakpoint
CREATE INDEX "outbox_unpublished" ON "outbox" USING btree ("id") WHERE "outbox"."published_at" is null;--> statement-breakpoint
CREATE INDEX "ready_steps_org_order" ON "ready_steps" USING btree ("org","ready_since","run_id","step_id");--> statement-breakpoint
CREATE INDEX "runs_org_started" ON "runs" USING btree ("org","started_at","id");--> statement-breakpoint
CREATE INDEX "runs_org_process_started" ON "runs" USING btree ("org","process","started_at","id");--> statement-breakpoint
CREATE INDEX "timers_fire_at" ON "timers" USING btree ("fire_at");--> statement-breakpoint
CREATE INDEX "work_items_org_group" ON "work_items" USING btree ("org","group_id","created_at");--> statement-breakpoint
CREATE INDEX "work_items_org_person" ON "work_items" USING btree ("org","person","created_at");