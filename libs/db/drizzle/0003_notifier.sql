CREATE TABLE "group_emails" (
	"org" text NOT NULL,
	"group_id" text NOT NULL,
	"address" text NOT NULL,
	"updated_by" text NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "group_emails_org_group_id_pk" PRIMARY KEY("org","group_id")
);
--> statement-breakpoint
CREATE TABLE "notification_attempts" (
	"delivery_id" bigint NOT NULL,
	"n" integer NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"status" text NOT NULL,
	"response_code" integer,
	"error" text,
	"duration_ms" integer NOT NULL,
	"next_retry_at" timestamp (3) with time zone,
	"replica" text NOT NULL,
	CONSTRAINT "notification_attempts_delivery_id_n_pk" PRIMARY KEY("delivery_id","n")
);
--> statement-breakpoint
CREATE TABLE "notification_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" bigint NOT NULL,
	"destination" text NOT NULL,
	"org" text NOT NULL,
	"channel" text NOT NULL,
	"subscription_id" text,
	"address" text,
	"run_id" text NOT NULL,
	"type" text NOT NULL,
	"state" text NOT NULL,
	"attempts" integer NOT NULL,
	"next_attempt_at" timestamp (3) with time zone,
	"give_up_at" timestamp (3) with time zone NOT NULL,
	"held_until" timestamp (3) with time zone,
	"hold_token" text,
	"message" jsonb,
	"reason" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"delivered_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "notification_events" (
	"event_id" bigint PRIMARY KEY NOT NULL,
	"org" text NOT NULL,
	"type" text NOT NULL,
	"run_id" text NOT NULL,
	"mode" text NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"data" jsonb NOT NULL,
	"received_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_subscriptions" (
	"id" text PRIMARY KEY NOT NULL,
	"org" text NOT NULL,
	"url" text NOT NULL,
	"events" jsonb,
	"include_test_runs" boolean NOT NULL,
	"secret" text NOT NULL,
	"state" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"ended_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "notification_deliveries_pair" ON "notification_deliveries" USING btree ("event_id","destination");--> statement-breakpoint
CREATE INDEX "notification_deliveries_due" ON "notification_deliveries" USING btree ("next_attempt_at") WHERE "notification_deliveries"."state" = 'pending';--> statement-breakpoint
CREATE INDEX "notification_deliveries_subscription" ON "notification_deliveries" USING btree ("subscription_id","id");--> statement-breakpoint
CREATE INDEX "notification_deliveries_run" ON "notification_deliveries" USING btree ("org","run_id","id");--> statement-breakpoint
CREATE INDEX "notification_events_run" ON "notification_events" USING btree ("org","run_id");--> statement-breakpoint
CREATE INDEX "webhook_subscriptions_org" ON "webhook_subscriptions" USING btree ("org","created_at");