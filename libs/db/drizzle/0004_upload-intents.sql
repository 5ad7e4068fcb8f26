CREATE TABLE "upload_intents" (
	"id" text PRIMARY KEY NOT NULL,
	"org" text NOT NULL,
	"sha256" text NOT NULL,
	"bytes" bigint NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "files" ADD COLUMN "etag" text;--> statement-breakpoint
CREATE INDEX "upload_intents_object" ON "upload_intents" USING btree ("org","sha256","created_at");--> statement-breakpoint
CREATE INDEX "files_object" ON "files" USING btree ("org","sha256");