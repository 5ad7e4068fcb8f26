ALTER TABLE "timers" ADD COLUMN "claimed_until" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "timers" ADD COLUMN "claim_token" text;