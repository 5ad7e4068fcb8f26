// Mail out (issue #11): through SMTP with nodemailer, or as .eml files in `baton dev` when no SMTP is set.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type { MailMessage } from "./payload.ts";
import type { AttemptResult } from "./webhook-sender.ts";

/** Sends mail; never throws. */
export interface Mailer {
  /**
   * Sends `message` as one attempt of delivery `deliveryId` (its `Message-ID` is derived from it, the
   * same on every attempt, so a mail sent twice after a crash reads as one message).
   */
  send(deliveryId: number, message: MailMessage): Promise<AttemptResult>;
  close(): void;
}

const messageId = (deliveryId: number) => `<baton-delivery-${deliveryId}@baton.local>`;

/**
 * A mailer over SMTP (`BATON_SMTP_URL`, any URL nodemailer takes). An answer with a 5xx reply code
 * is a permanent refusal (`refused`: no retry); anything else that fails is retried.
 */
export function smtpMailer(url: string, from: string, timeoutMs: number): Mailer {
  const transport = nodemailer.createTransport({
    url,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return {
    async send(deliveryId, message) {
      try {
        const info = await transport.sendMail({
          from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          messageId: messageId(deliveryId),
        });
        const code = /^(\d{3})/.exec(String(info.response ?? ""))?.[1];
        return { status: "ok", responseCode: code ? Number(code) : null, error: null };
      } catch (error) {
        const e = error as { responseCode?: number; code?: string; message?: string };
        const code = typeof e.responseCode === "number" ? e.responseCode : null;
        // Never the URL: it may hold the SMTP password.
        const words = e.code ?? (code ? `SMTP ${code}` : "SMTP error");
        if (code !== null && code >= 500)
          return { status: "refused", responseCode: code, error: `${words}: refused by the mail server` };
        return { status: "failed", responseCode: code, error: words };
      }
    },
    close() {
      transport.close();
    },
  };
}

/**
 * A mailer for `baton dev` without SMTP: each mail becomes `<dir>/<delivery id>.eml` (RFC 5322, as it
 * would have been sent), so a newcomer can see what would go out. Written to a temporary name and
 * renamed, so a reader never sees half a file; a second attempt of the same delivery replaces it.
 */
export function fileMailer(dir: string, from: string): Mailer {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    async send(deliveryId, message) {
      try {
        mkdirSync(dir, { recursive: true });
        const info = await transport.sendMail({
          from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          messageId: messageId(deliveryId),
        });
        const file = join(dir, `${String(deliveryId).padStart(8, "0")}.eml`);
        writeFileSync(`${file}.tmp`, info.message as Buffer);
        renameSync(`${file}.tmp`, file);
        return { status: "ok", responseCode: null, error: null };
      } catch (error) {
        return { status: "failed", responseCode: null, error: String(error) };
      }
    },
    close() {
      transport.close();
    },
  };
}
