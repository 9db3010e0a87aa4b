import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { roles } from '@/db/schema/states';
import { DEFAULT_LINK_KEYS, linkKeyRing, parseLinkKeys, type LinkKeyRing } from '@/lib/recipient/link-keys';
import { DEFAULT_EVIDENCE_SIGNING_KEYS, evidenceKeyRing, parseSigningKeys, type EvidenceKeyRing } from '@/lib/evidence/signing-keys';

/**
 * Every environment variable the product reads, with its default, parsed once.
 * A missing or malformed value is a start-up error that names the variable;
 * secrets never get a default (the demo script generates and persists its own).
 */

const durationPattern = /^(\d+)(ms|s|m|h|d)?$/;
const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "15m", "900s", "2h", "7d" or a bare number of seconds → milliseconds. */
export function parseDuration(text: string): number | null {
  const match = durationPattern.exec(text.trim());
  if (!match) return null;
  const unit = (match[2] ?? 's') as keyof typeof unitMs;
  const ms = Number(match[1]) * unitMs[unit];
  // "99999…9d" would otherwise become Infinity (or lose precision) and pass as a duration.
  return Number.isSafeInteger(ms) ? ms : null;
}

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === null) {
        ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration like 15m, 900s, 2h or 7d` });
        return z.NEVER;
      }
      return ms;
    });

/** A Node timer cannot wait longer than 2^31-1 ms (~24.8 days): past that it fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A duration that drives a setTimeout/setInterval, so it must fit one. */
const timer = (fallback: string) => duration(fallback).refine((ms) => ms <= MAX_TIMER_MS, 'must be at most 24d: longer timers fire at once in Node');

const int = (fallback: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(fallback);

const secret = z.string().min(32, 'must be at least 32 characters (use `openssl rand -hex 32`)');

const optionalUrl = z.url().optional();

const otlpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://otel-collector:4318 (OTLP over HTTP)' }).optional();

const quietHours = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$/, 'must look like 21:00-08:00')
  .optional();

export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  DATABASE_URL: optionalUrl,
  EMBEDDED_PG_DIR: z.string().default('.data/pg'),
  NOTICE_KEY_SECRET: secret,
  MESSAGE_ID_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+$/i, 'must be a bare domain such as notices.example.com')
    .default('notices.localhost'),
  /**
   * Only the initial ledger mode: the first worker stores it in runtime_controls when nothing is
   * stored; after that the stored mode (the Rollout page) holds for every worker and this is ignored, with a warning when it disagrees.
   */
  LEDGER_MODE: z.enum(['shadow', 'enforce']).default('enforce'),
  QUARANTINE_AFTER: duration('15m'),
  /**
   * The provider reconciler (lib/ledger/provider-reconcile.ts, Postmark and SendGrid only): a claim
   * still `claimed` RECONCILE_AFTER after it was made is looked up at the provider every
   * RECONCILE_EVERY; found accepted, it is recorded sent; still not found RECONCILE_GIVE_UP after
   * the claim, it is left to a person with that reason (never released).
   */
  RECONCILE_AFTER: duration('2m'),
  RECONCILE_GIVE_UP: duration('30m'),
  RECONCILE_EVERY: timer('1m').refine((ms) => ms >= 100, 'must be at least 100ms'),
  /** A due (pending) or claimed notice, not sent, whose window closes within this is "at risk" (console, notice_ledger_window_at_risk). */
  WINDOW_AT_RISK_WITHIN: duration('24h').refine((ms) => ms >= 60_000, 'must be at least 1m'),
  /**
   * The claim-to-commit p99 the alert NoticeLedgerClaimToCommitP99OverObjective holds the workers
   * to: each worker exports it (notice_ledger_objective_seconds), so the rule needs no edit. 250 ms
   * is eight times the p99 measured against a local relay (30–31 ms at 1 × 32): room for a remote
   * relay's round trips, and a real fault when passed for ten minutes.
   */
  CLAIM_TO_COMMIT_OBJECTIVE: duration('250ms').refine((ms) => ms >= 1, 'must be at least 1ms'),
  QUEUE_BACKEND: z.enum(['pgboss', 'rabbitmq']).default('pgboss'),
  AMQP_URL: optionalUrl,
  /** The wake-up queue's name (pg-boss queue or RabbitMQ queue): one per environment. */
  QUEUE_NAME: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,99}$/i, 'must be letters, digits, . _ - (at most 100)')
    .default('notice-wakeup'),
  SMTP_URL: z.url().default('smtp://127.0.0.1:2525'),
  SMTP_TIMEOUT: timer('30s'),
  /** One SMTP send from its first byte to the final reply, a new connection included; SMTP_TIMEOUT bounds each step within it. */
  SMTP_SEND_DEADLINE: timer('45s'),
  MAIL_FROM: z.string().default('Notices <notices@notices.localhost>'),
  /** The local SMTP sink (`scripts/smtp-sink.ts`, `npm run demo`) and where it posts its events. */
  SMTP_SINK_PORT: int(2525, 0, 65535),
  SMTP_SINK_EVENTS_URL: optionalUrl,
  SMTP_SINK_EVENT_DELAY: timer('500ms'),
  /** The sink writes every message it receives there as `<n>-<correlation>.eml` (the demo: `<data dir>/mail`), to read what a customer got. */
  SMTP_SINK_MAILDIR: z.string().min(1).optional(),
  /** Comma-separated SNS topic ARNs whose notifications are accepted; empty accepts none (required in production with ses enabled). */
  SNS_TOPIC_ARNS: z.string().default(''),
  /**
   * The provider webhooks the console accepts (lib/events/webhook-sources.ts); unset: all five. In
   * production the console does not start while a named one lacks its credential.
   */
  WEBHOOK_PROVIDERS: z
    .string()
    .regex(
      /^\s*(none|(generic|postmark|sendgrid|ses|twilio)(\s*,\s*(generic|postmark|sendgrid|ses|twilio))*)\s*$/i,
      'must be a comma-separated list of generic, postmark, sendgrid, ses, twilio, or none',
    )
    .default('generic,postmark,sendgrid,ses,twilio'),
  /**
   * For consoles without egress to AWS: a directory holding SNS signing certificates, each file
   * named as the last path segment of its SigningCertURL. Set, the certificate is read from
   * here instead of fetched; the URL must still be an https SNS URL and the signature must match.
   */
  SNS_CERT_DIR: z.string().min(1).optional(),
  WORKER_CONCURRENCY: int(8, 1, 256),
  /**
   * At most this many of a worker process's notices between their claim and their result commit
   * (lib/jobs/handle-wakeup.ts sendOneBy); its other handlers load, decide and compose meanwhile.
   * The interval a crash turns into quarantine, and its p99 grows with how many share the event
   * loop in it. 256 (the default, WORKER_CONCURRENCY's most): no window. A window trades peak
   * throughput for that interval: 16 at 2 × 32 cost ~10 % of the peak (README, Configuration).
   */
  WORKER_CLAIM_WINDOW: int(256, 1, 256),
  /** SIGTERM: how long sends past their body may finish (then they are cut, outcome unknown) before the worker exits. */
  WORKER_STOP_GRACE: timer('30s').refine((ms) => ms >= 3_000, 'must be at least 3s'),
  /** Consecutive nothing-left failures (refused connects, no greeting) that open a transport's breaker (lib/transport/breaker.ts). */
  TRANSPORT_BREAKER_AFTER: int(5, 1, 1_000),
  /** An open breaker's first probe; each failed probe doubles the wait, up to TRANSPORT_PROBE_CAP. */
  TRANSPORT_PROBE_BASE: timer('2s'),
  TRANSPORT_PROBE_CAP: timer('1m'),
  WORKER_METRICS_PORT: int(9464, 0, 65535),
  /**
   * Where the worker's /metrics listens. Without WORKER_METRICS_TOKEN it has no authentication, so
   * loopback by default; a production scrape binds the pod's or host's address (or 0.0.0.0 behind
   * a network policy, or with the token).
   */
  WORKER_METRICS_HOST: z
    .string()
    .refine((host) => host === 'localhost' || isIP(host) !== 0, 'must be an IP address (127.0.0.1, ::1, the pod address, 0.0.0.0, ::) or localhost')
    .default('127.0.0.1'),
  /** Bearer token Prometheus presents to the worker's /metrics; unset, /metrics is open to whoever reaches WORKER_METRICS_HOST. */
  WORKER_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  VISIBILITY_TIMEOUT: timer('60s'),
  /**
   * How long the pg-boss adapter waits before asking again after finding nothing due. Short:
   * the empty fetch is one index probe with no write, and a long wait lets due wake-ups pile up
   * and start together (claim-to-commit p99 at 1 × 32: 30–31 ms at 50 ms, 34–43 ms at 500 ms).
   */
  QUEUE_POLL_INTERVAL: timer('50ms').refine((ms) => ms >= 50, 'must be at least 50ms'),
  /**
   * The hot-queue horizon (lib/queue/horizon.ts): a wake-up enters the queue only once its job is
   * due within this; the job row holds any longer delay and the dispatcher publishes it in time.
   * RabbitMQ holds no delays and ignores it (its horizon is 0).
   */
  QUEUE_HORIZON: timer('15m'),
  /**
   * RabbitMQ: deliveries of one wake-up before the quorum queue dead-letters it (x-delivery-limit).
   * Set explicitly, so RabbitMQ 3.x (no limit by default) and 4.x (20 by default) behave alike.
   */
  QUEUE_DELIVERY_LIMIT: int(20, 1, 1_000),
  /**
   * RabbitMQ: how long a starting worker keeps trying a broker that refuses connections (one
   * restarting, or not up yet) before it gives up with the reason. A refused login fails at once.
   */
  QUEUE_CONNECT_WAIT: timer('60s'),
  RATE_LIMIT_PER_DOMAIN: int(50, 1, 100_000),
  QUIET_HOURS: quietHours,
  /** The operator's notice configuration: event types, notice types and jurisdiction rules (lib/windows). */
  NOTICE_CONFIG: z.string().min(1).default('config/notice-ledger.json'),
  RETRY_BASE: duration('30s'),
  RETRY_CAP: duration('1h'),
  /** Not a budget (the window is, lib/jobs/backoff.ts): past it a required notice still retrying is at risk. */
  MAX_ATTEMPTS: int(8, 1, 100),
  /** A bulk retry of more failed notices than this waits for a second person's approval (the replay four-eyes path). */
  BULK_RETRY_APPROVAL_ABOVE: int(100, 0, 1_000_000),
  SWEEP_EVERY: timer('30s'),
  /** How often one worker (an advisory lock picks it) writes a sample of the overview's charts (overview_samples). */
  OVERVIEW_SAMPLE_EVERY: timer('60s').refine((ms) => ms >= 1_000 && ms <= 3_600_000, 'must be between 1s and 1h'),
  /** Overview samples older than this are deleted by the writer; the charts' longest range is 7 d. */
  OVERVIEW_SAMPLE_RETENTION: duration('8d').refine((ms) => ms >= 86_400_000, 'must be at least 1d'),
  /** How often each worker re-reads runtime_controls (pauses, ledger mode): a change reaches every worker within this. */
  RUNTIME_CONTROLS_REFRESH: timer('5s').refine((ms) => ms >= 100 && ms <= 60_000, 'must be between 100ms and 1m'),
  RETENTION_ATTEMPTS: duration('90d'),
  RETENTION_PROVIDER_EVENTS: duration('180d'),
  RETENTION_EVIDENCE: duration('730d'),
  /** At least MAX_DELAY + REPLAY_HORIZON (checked below): a ledger row outlives any replay of its notice. */
  RETENTION_LEDGER: duration('430d'),
  /** Provider event payloads are redacted to their ids and type after this; the row stays. */
  RETENTION_EVENT_DETAILS: duration('30d'),
  /**
   * The other tables that hold personal data (lib/retention.ts). Two years where a dispute may
   * need the record: a charge the notice preceded can be disputed for up to 540 days (card
   * networks), and business events count from their last notice's settlement, not their receipt
   * (a year-ahead notice settles ~400 d after its event arrived). What a job that may still be
   * sent needs is kept whatever its age.
   */
  RETENTION_BUSINESS_EVENTS: duration('730d'),
  /** From its resolution, or its creation while open: a gap's window is long past by then. */
  RETENTION_UNPLANNED_NOTICES: duration('730d'),
  /** The customer's "cancel this renewal": what a dispute of the next charge turns on. */
  RETENTION_CANCELLATION_REQUESTS: duration('730d'),
  /**
   * Superseded preference changes (the newest of each preference stays): four years, the US TCPA
   * limitation period for a claim about a text sent after a STOP (28 U.S.C. § 1658).
   */
  RETENTION_PREFERENCE_HISTORY: duration('1461d'),
  /** Evidence never resolved, from when it was opened. */
  RETENTION_OPEN_EVIDENCE: duration('730d'),
  /**
   * Items of a finished replay (uploaded rows with addresses) and its refused rows' values. The
   * replay's row (who asked, who approved, its counts) and audit entries stay, and the notices it
   * sent are in the ledger for RETENTION_LEDGER; half a year answers questions about one run.
   */
  RETENTION_REPLAY_ITEMS: duration('180d'),
  /** Rows deleted per statement, so retention never holds long locks. */
  RETENTION_BATCH: int(1_000, 1, 100_000),
  /**
   * How far ahead a notice may be scheduled. Legal windows sit far before the charge (France: one
   * to three months before the non-renewal deadline; California 15–45 days; an annual renewal is
   * reported right after the previous charge), so a year and a month of headroom.
   */
  MAX_DELAY: duration('400d'),
  REPLAY_HORIZON: duration('30d'),
  /** Outbound webhooks (lib/webhooks/): the dispatcher's pass, an attempt's timeout, the retry schedule (first entry: the first attempt). */
  WEBHOOK_DISPATCH_EVERY: timer('1s').refine((ms) => ms >= 10, 'must be at least 10ms'),
  WEBHOOK_TIMEOUT: timer('15s').refine((ms) => ms >= 100, 'must be at least 100ms'),
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('0s,5s,5m,30m,2h,5h,10h,10h')
    .transform((text, ctx) => {
      const steps = text.split(',').map((part) => parseDuration(part));
      if (steps.length === 0 || steps.some((ms) => ms === null)) {
        ctx.addIssue({ code: 'custom', message: `"${text}" is not a comma-separated list of durations like 0s,5s,5m` });
        return z.NEVER;
      }
      return steps.filter((ms): ms is number => ms !== null);
    }),
  /** An endpoint failing without a success for this long is disabled (alert NoticeLedgerWebhookEndpointFailing first). */
  WEBHOOK_DISABLE_AFTER: duration('5d'),
  /** How long a process trusts its cached list of subscribed event types; a new endpoint receives events from at most this later. */
  WEBHOOK_SUBSCRIPTIONS_TTL: timer('5s'),
  /** Hosts, addresses or CIDR ranges a webhook URL may resolve to although private, loopback or link-local (comma-separated). */
  WEBHOOK_ALLOWED_PRIVATE: z.string().default(''),
  /** After a secret rotation, how long the previous secret keeps signing beside the new one (two signatures per delivery). */
  WEBHOOK_ROTATION_OVERLAP: duration('24h'),
  /** How often each worker looks for a running replay whose next batch is due. */
  REPLAY_EVERY: timer('1s').refine((ms) => ms >= 10, 'must be at least 10ms'),
  /** Wake-ups a worker publishes per replay batch (one transaction). */
  REPLAY_BATCH: int(200, 1, 10_000),
  /** A console replay upload: the request body (the file inside its JSON) and the file's rows, each refused past its cap (lib/replay/upload-body.ts). */
  REPLAY_UPLOAD_MAX_BYTES: int(50_000_000, 1_024, 1_000_000_000),
  REPLAY_UPLOAD_MAX_ROWS: int(200_000, 1, 10_000_000),
  /**
   * Reverse proxies in front of the console that append the client's address to
   * X-Forwarded-For. 0: none can be trusted, so sign-ins have no per-address limit.
   */
  TRUSTED_PROXY_HOPS: int(0, 0, 10),
  SIGN_IN_MAX_FAILURES_PER_ADDRESS: int(20, 1, 1_000_000),
  // 0 would be "never expires" to the limiter: a permanent ban of the address.
  SIGN_IN_ADDRESS_WINDOW: duration('15m').refine((ms) => ms >= 1_000, 'must be at least 1s'),
  /**
   * Password hashes (sign-in, password change) one console process computes at once, and how many
   * more may wait; beyond that a sign-in is refused as busy before any work. Each scrypt at
   * N=2^17 holds 128 MiB for ~0.3 s, so the defaults cap a flood at 256 MiB and ~1.5 s of queue.
   */
  PASSWORD_HASH_CONCURRENCY: int(2, 1, 64),
  /** scrypt's N for new hashes, with r=8, p=1 (lib/auth/password.ts): OWASP's 2^17 by default; the test suites lower it for speed. */
  PASSWORD_HASH_N: int(131_072, 1_024, 1_048_576).refine((n) => (n & (n - 1)) === 0, 'must be a power of two'),
  PASSWORD_HASH_QUEUE: int(8, 0, 10_000),
  /** Roles whose password sign-in must add a TOTP (lib/auth/mfa.ts); `none` for none. Comma-separated. */
  MFA_REQUIRED_ROLES: z
    .string()
    .default('admin,manager')
    .transform((value) => (value.trim() === 'none' ? [] : value.split(',').map((role) => role.trim())))
    .pipe(z.array(z.enum(roles, { error: `must be "none" or a comma-separated list of ${roles.join(', ')}` }))),
  /** A console session nobody used for this long ends (every session of that user: lib/auth/session.ts). */
  SESSION_IDLE_TIMEOUT: duration('30m').refine((ms) => ms >= 1_000 && ms <= 12 * 3_600_000, 'must be between 1s and 12h'),
  /**
   * The recipient page (app/r/): requests per notice link and per client address (the latter only
   * behind TRUSTED_PROXY_HOPS) in each window, and wrong one-time codes per link before it refuses
   * until the window ends (50-bit codes: 5 guesses per 15 min never find one).
   */
  RECIPIENT_LINK_LIMIT: int(30, 1, 1_000_000),
  RECIPIENT_ADDRESS_LIMIT: int(300, 1, 1_000_000),
  RECIPIENT_CODE_ATTEMPTS: int(5, 1, 1_000),
  RECIPIENT_LINK_WINDOW: duration('15m').refine((ms) => ms >= 1_000, 'must be at least 1s'),
  /** Template test-sends (console Templates page) per console user in each window. */
  TEMPLATE_TEST_LIMIT: int(10, 1, 10_000),
  TEMPLATE_TEST_WINDOW: duration('1h').refine((ms) => ms >= 1_000, 'must be at least 1s'),
  NEXTAUTH_SECRET: secret.optional(),
  NEXTAUTH_URL: optionalUrl,
  /**
   * Where recipients reach the product: the links in a notice (the recipient page, one-click
   * unsubscribe) and provider callbacks are built on it. https, except http on a loopback host
   * (localhost, 127.0.0.1, [::1]) as the demo and the tests use. Unset: NEXTAUTH_URL, else
   * https://MESSAGE_ID_DOMAIN.
   */
  PUBLIC_BASE_URL: z
    .url()
    // zod runs these even when z.url() already failed: a text that is no URL is refused there, not thrown here.
    .refine((text) => {
      const url = URL.parse(text);
      return !url || url.protocol === 'https:' || (url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname));
    }, 'must be an https URL (http only for localhost, 127.0.0.1 or [::1])')
    .refine((text) => {
      const url = URL.parse(text);
      return !url || (url.search === '' && url.hash === '' && url.username === '' && url.password === '');
    }, 'must have no query, fragment or credentials')
    .optional(),
  /**
   * A mailbox the operator's own mail server handles for RFC 8058 mailto unsubscribes (the
   * subject carries the signed token; lib/recipient/unsubscribe.ts). Unset: courtesy notices
   * advertise only the https one-click URI, never a mailto nobody reads.
   */
  UNSUBSCRIBE_MAILBOX: z.email().optional(),
  /**
   * The recipient-link keys, `kid:secret[:YYYY-MM-DD],…` (lib/recipient/link-keys.ts, README
   * "Rotating the link key"): the first signs, the others verify until their date. The default
   * is the key derived from NOTICE_KEY_SECRET, as links were always signed.
   */
  RECIPIENT_LINK_KEYS: z
    .string()
    .default(DEFAULT_LINK_KEYS)
    .transform((text, ctx) => {
      const parsed = parseLinkKeys(text);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: parsed.message });
        return z.NEVER;
      }
      return parsed.specs;
    }),
  /**
   * The evidence record (lib/evidence/, README "Evidence packs"): which notices keep one —
   * categories (`required`, `courtesy`), notice type names, `all` or `none`; its retention (3
   * years: California's AB 2863 proof period), the chain head's signing interval and keys
   * (`kid:secret` or `kid:public:<x>`, the first signs, every one is published), the nightly
   * verification pass, and an RFC 3161 time-stamping authority for the signed heads.
   */
  EVIDENCE_FOR: z
    .string()
    .default('required')
    .refine(
      (text) => text.split(',').every((part) => /^[a-z0-9_]{1,64}$/.test(part.trim())),
      'must be a comma-separated list of categories (required, courtesy), notice types, all or none',
    ),
  RETENTION_EVIDENCE_RECORD: duration('1096d'),
  EVIDENCE_SIGN_EVERY: timer('1m').refine((ms) => ms >= 1_000, 'must be at least 1s'),
  EVIDENCE_VERIFY_EVERY: timer('24h').refine((ms) => ms >= 1_000, 'must be at least 1s'),
  EVIDENCE_SIGNING_KEYS: z
    .string()
    .default(DEFAULT_EVIDENCE_SIGNING_KEYS)
    .transform((text, ctx) => {
      const parsed = parseSigningKeys(text);
      if (!parsed.ok) {
        ctx.addIssue({ code: 'custom', message: parsed.message });
        return z.NEVER;
      }
      return parsed.specs;
    }),
  TSA_URL: z.url({ protocol: /^https?$/, error: 'must be the http(s) URL of an RFC 3161 time-stamping authority' }).optional(),
  /** Bearer token Prometheus presents to the console's /api/metrics; unset disables that endpoint. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  OIDC_ISSUER: optionalUrl,
  OIDC_CLIENT_ID: z.string().optional(),
  OIDC_CLIENT_SECRET: z.string().optional(),
  /** `required`: an id_token without `email_verified` is refused; `when-sent`: trusted (providers that never send it). */
  OIDC_EMAIL_VERIFIED: z.enum(['required', 'when-sent']).default('required'),
  WEBHOOK_SECRET: secret.optional(),
  POSTMARK_WEBHOOK_USER: z.string().optional(),
  POSTMARK_WEBHOOK_PASSWORD: z.string().optional(),
  SENDGRID_WEBHOOK_PUBLIC_KEY: z.string().optional(),
  /** Twilio Programmable Messaging, for notice types that go by SMS (README "SMS"). */
  TWILIO_ACCOUNT_SID: z
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'must be a Twilio Account SID: AC followed by 32 hex digits')
    .optional(),
  TWILIO_AUTH_TOKEN: z.string().min(16, 'must be the account auth token (32 characters)').optional(),
  /** The sender: an E.164 number or an alphanumeric sender ID; or TWILIO_MESSAGING_SERVICE_SID instead. */
  TWILIO_FROM: z
    .string()
    .regex(/^(\+[1-9]\d{6,14}|[A-Za-z0-9 ]{1,11})$/, 'must be an E.164 number such as +15005550006 or an alphanumeric sender ID (at most 11)')
    .optional(),
  TWILIO_MESSAGING_SERVICE_SID: z
    .string()
    .regex(/^MG[0-9a-fA-F]{32}$/, 'must be a Messaging Service SID: MG followed by 32 hex digits')
    .optional(),
  /** Where the official client sends its requests: Twilio's API, or the local peer (testing/twilio-peer.ts) in tests and the demo. */
  TWILIO_API_BASE_URL: z.url().default('https://api.twilio.com'),
  /** How long a send waits for Twilio's answer; past it the outcome is unknown (the message may exist). */
  TWILIO_TIMEOUT: timer('15s'),
  /** The demo's local Twilio peer (`scripts/twilio-peer.ts`). */
  TWILIO_PEER_PORT: int(0, 0, 65535),
  /** The peer appends every message it creates there, one JSON line each (the demo: `<data dir>/sms.jsonl`), to read what a phone got. */
  TWILIO_PEER_OUTBOX: z.string().min(1).optional(),
  /** Messages per second per sender and destination country, shared by all workers (a long code sends ~1/s to the US). */
  RATE_LIMIT_PER_SMS_SENDER: int(10, 1, 10_000),
  /**
   * Which transport sends email (lib/channels/registry.ts): the SMTP relay (SMTP_URL), or an HTTP
   * API through its official SDK — Postmark, Amazon SES v2 or SendGrid — with its settings below.
   */
  EMAIL_PROVIDER: z.enum(['smtp', 'postmark', 'ses', 'sendgrid'], 'must be smtp, postmark, ses or sendgrid').default('smtp'),
  /** How long an HTTP provider's send waits for its answer; past it the outcome is unknown (the message may be accepted). */
  EMAIL_API_TIMEOUT: timer('15s'),
  /**
   * Batched sends (lib/jobs/handle-batch.ts) where the provider has a batch API (Postmark's
   * `POST /email/batch`, at most 500; SES v2 SendBulkEmail, at most 50): the most notices per
   * call, 1 for none. A batch is also at most the provider's cap and WORKER_CONCURRENCY notices,
   * the handlers in flight.
   */
  EMAIL_BATCH_SIZE: z.coerce
    .number('must be a whole number of notices per call, 1 to 500')
    .int('must be a whole number of notices per call, 1 to 500')
    .min(1, 'must be at least 1 (1 sends one notice per call)')
    .max(500, "must be at most 500, the largest provider cap (Postmark's POST /email/batch; SES takes 50 of them)")
    .default(50),
  /** How long the first notice ready for a batch waits for others before the call goes anyway. */
  EMAIL_BATCH_GATHER: duration('5ms').refine((ms) => ms <= 1_000, 'must be at most 1s: every notice of the batch waits this long, its claim not yet taken'),
  POSTMARK_SERVER_TOKEN: z.string().min(1).optional(),
  /** Where the official client sends: Postmark's API, or the local peer (testing/postmark-peer.ts) in tests and the demo. */
  POSTMARK_API_BASE_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://api.postmarkapp.com' })
    .default('https://api.postmarkapp.com'),
  POSTMARK_MESSAGE_STREAM: z.string().min(1).default('outbound'),
  SES_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region such as eu-west-1')
    .optional(),
  /** Unset (both): the SDK's default credential chain (an instance or task role). */
  SES_ACCESS_KEY_ID: z.string().min(1).optional(),
  SES_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  /** SES's regional endpoint by default; a local peer (testing/ses-peer.ts) in tests and the demo. */
  SES_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  /** The configuration set whose event destination publishes SES events (the `ses` webhook). */
  SES_CONFIGURATION_SET: z.string().min(1).optional(),
  SENDGRID_API_KEY: z.string().min(1).optional(),
  /** Where the official client sends: SendGrid's API, or the local peer (testing/sendgrid-peer.ts) in tests and the demo. */
  SENDGRID_API_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://api.sendgrid.com' }).default('https://api.sendgrid.com'),
  /** The demo's local Postmark peer (`scripts/postmark-peer.ts`, DEMO_EMAIL_PROVIDER=postmark): its port, where it posts Delivery webhooks, its outbox. */
  POSTMARK_PEER_PORT: int(0, 0, 65535),
  POSTMARK_PEER_EVENTS_URL: optionalUrl,
  POSTMARK_PEER_OUTBOX: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * OpenTelemetry traces (lib/telemetry/): off unless an OTLP/HTTP endpoint is set. The base
   * endpoint gets `/v1/traces` appended; the traces endpoint is used as given (the OTLP spec's
   * rule). Other OTEL_EXPORTER_OTLP_* settings (headers, timeout) are read by the exporter.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl,
  OTEL_SERVICE_NAME: z.string().min(1).max(255).optional(),
  /** Test-only: the worker SIGKILLs itself at this point of the send path or of a replay batch (crash tests). */
  WORKER_CRASH_AT: z.enum(['after_claim', 'after_send', 'after_commit', 'replay_before_commit']).optional(),
});

export type Config = z.infer<typeof envSchema>;

/** The base of every link a recipient follows and every callback a provider makes (PUBLIC_BASE_URL). */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'NEXTAUTH_URL' | 'MESSAGE_ID_DOMAIN'>): string {
  return config.PUBLIC_BASE_URL ?? config.NEXTAUTH_URL ?? `https://${config.MESSAGE_ID_DOMAIN}`;
}

/** The keys recipient links are signed and verified with (RECIPIENT_LINK_KEYS). */
export function recipientLinkKeys(config: Pick<Config, 'RECIPIENT_LINK_KEYS' | 'NOTICE_KEY_SECRET'>): LinkKeyRing {
  return linkKeyRing({ specs: config.RECIPIENT_LINK_KEYS, noticeKeySecret: config.NOTICE_KEY_SECRET });
}

/** The keys evidence heads are signed with and published (EVIDENCE_SIGNING_KEYS). */
export function evidenceSigningKeys(config: Pick<Config, 'EVIDENCE_SIGNING_KEYS' | 'NOTICE_KEY_SECRET'>): EvidenceKeyRing {
  return evidenceKeyRing({ specs: config.EVIDENCE_SIGNING_KEYS, noticeKeySecret: config.NOTICE_KEY_SECRET });
}

export type TwilioSettings = {
  accountSid: string;
  authToken: string;
  sender: { from: string } | { messagingServiceSid: string };
  apiBaseUrl: string;
  timeoutMs: number;
};

/** The Twilio settings when complete, else the names of the missing ones (all three when none is set). */
export function twilioSettings(config: Config): { ok: true; settings: TwilioSettings } | { ok: false; missing: string[] } {
  const missing: string[] = [];
  if (!config.TWILIO_ACCOUNT_SID) missing.push('TWILIO_ACCOUNT_SID');
  if (!config.TWILIO_AUTH_TOKEN) missing.push('TWILIO_AUTH_TOKEN');
  if (!config.TWILIO_FROM && !config.TWILIO_MESSAGING_SERVICE_SID) missing.push('TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID');
  if (missing.length > 0 || !config.TWILIO_ACCOUNT_SID || !config.TWILIO_AUTH_TOKEN) return { ok: false, missing };
  return {
    ok: true,
    settings: {
      accountSid: config.TWILIO_ACCOUNT_SID,
      authToken: config.TWILIO_AUTH_TOKEN,
      sender: config.TWILIO_MESSAGING_SERVICE_SID ? { messagingServiceSid: config.TWILIO_MESSAGING_SERVICE_SID } : { from: config.TWILIO_FROM ?? '' },
      apiBaseUrl: config.TWILIO_API_BASE_URL,
      timeoutMs: config.TWILIO_TIMEOUT,
    },
  };
}

/** What the chosen EMAIL_PROVIDER lacks: each provider's credentials are required only when it is chosen. */
function emailProviderProblems(config: Config): string[] {
  const problems: string[] = [];
  if (config.EMAIL_PROVIDER === 'postmark' && !config.POSTMARK_SERVER_TOKEN) problems.push('POSTMARK_SERVER_TOKEN is required when EMAIL_PROVIDER=postmark');
  if (config.EMAIL_PROVIDER === 'sendgrid' && !config.SENDGRID_API_KEY) problems.push('SENDGRID_API_KEY is required when EMAIL_PROVIDER=sendgrid');
  if (config.EMAIL_PROVIDER === 'ses' && !config.SES_REGION) problems.push('SES_REGION is required when EMAIL_PROVIDER=ses');
  if (Boolean(config.SES_ACCESS_KEY_ID) !== Boolean(config.SES_SECRET_ACCESS_KEY))
    problems.push('SES_ACCESS_KEY_ID and SES_SECRET_ACCESS_KEY: set both, or neither for the default credential chain');
  return problems;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

type Env = Record<string, string | undefined>;

/** Parses `env`; blank values count as unset so `FOO=` in a .env file means "use the default". */
export function loadConfig(env: Env = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = issue.path.join('.') || '(environment)';
        const message = issue.code === 'invalid_type' && issue.input === undefined ? 'is required but not set' : issue.message;
        return `${name} ${message}`;
      }),
    );
  }
  const config = parsed.data;
  const problems: string[] = [];
  if (config.QUEUE_BACKEND === 'rabbitmq' && !config.AMQP_URL) problems.push('AMQP_URL is required when QUEUE_BACKEND=rabbitmq');
  if (config.RECONCILE_GIVE_UP <= config.RECONCILE_AFTER)
    problems.push('RECONCILE_GIVE_UP must be longer than RECONCILE_AFTER: the provider is asked between the two');
  if (config.RETENTION_LEDGER < config.MAX_DELAY + config.REPLAY_HORIZON) {
    problems.push('RETENTION_LEDGER must be at least MAX_DELAY + REPLAY_HORIZON: a ledger row has to outlive any replay of its notice');
  }
  if (config.OIDC_ISSUER && !(config.OIDC_CLIENT_ID && config.OIDC_CLIENT_SECRET)) {
    problems.push('OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are required when OIDC_ISSUER is set');
  }
  if (config.SNS_CERT_DIR && !isDirectory(config.SNS_CERT_DIR)) problems.push(`SNS_CERT_DIR is not a readable directory: ${config.SNS_CERT_DIR}`);
  // Partial Twilio settings are fine here: the console needs only TWILIO_AUTH_TOKEN (to verify
  // callbacks); a worker with SMS types names what it lacks at start-up (worker/start.ts).
  if (config.TWILIO_FROM && config.TWILIO_MESSAGING_SERVICE_SID) problems.push('TWILIO_FROM and TWILIO_MESSAGING_SERVICE_SID: set one sender, not both');
  problems.push(...emailProviderProblems(config));
  if (config.WORKER_CRASH_AT && config.NODE_ENV === 'production') problems.push('WORKER_CRASH_AT is a test hook and must not be set in production');
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * The few settings read outside the parsed configuration: before it can be parsed (the log
 * level of a logger made at import time) or after it may have been (the launchers start the
 * embedded server, then export its DATABASE_URL). Everything else reads `config()`.
 */
export const processEnv = {
  databaseUrl: (): string | undefined => process.env.DATABASE_URL || undefined,
  processName: (): string | undefined => process.env.NOTICE_LEDGER_PROCESS || undefined,
  logLevel: (): string | undefined => process.env.LOG_LEVEL || undefined,
  /** Names this process (PostgreSQL's application_name, log lines) unless its launcher did. */
  nameProcess: (name: string): void => {
    process.env.NOTICE_LEDGER_PROCESS ??= name;
  },
};

/**
 * Where the notice configuration is and the quiet hours every type falls back to: all that
 * reading it needs. A tool that only derives notice keys (the demo's and the browser tests' seed,
 * a backfill) has the key secret in hand and none of the product's other settings, so this parses
 * these two alone, with the same rules as `config()`.
 */
const noticeSettingsSchema = envSchema.pick({ NOTICE_CONFIG: true, QUIET_HOURS: true });
export type NoticeSettings = z.infer<typeof noticeSettingsSchema>;

export function noticeSettings(env: Env = process.env): NoticeSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = noticeSettingsSchema.safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  return parsed.data;
}

/** EVIDENCE_FOR alone, for the evidence writers outside the worker (webhooks, recipient page, console; lib/evidence/record.ts). */
export function evidenceForSetting(env: Env = process.env): string {
  const parsed = envSchema.shape.EVIDENCE_FOR.safeParse(env.EVIDENCE_FOR || undefined);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `EVIDENCE_FOR: ${issue.message}`));
  return parsed.data;
}

/**
 * The password hashing settings, parsed alone like noticeSettings: the seeds, the CLI and the
 * tests hash passwords without the product's other settings.
 */
const passwordHashSchema = envSchema.pick({ PASSWORD_HASH_N: true, PASSWORD_HASH_CONCURRENCY: true, PASSWORD_HASH_QUEUE: true });
export type PasswordHashSettings = z.infer<typeof passwordHashSchema>;

export function passwordHashSettings(env: Env = process.env): PasswordHashSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = passwordHashSchema.safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  return parsed.data;
}

/**
 * Where spans go, parsed alone like noticeSettings: the console's start-up hook and the worker
 * install tracing before anything else reads the configuration. `tracesUrl` null: tracing off.
 */
const tracingSettingsSchema = envSchema.pick({ OTEL_EXPORTER_OTLP_ENDPOINT: true, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: true, OTEL_SERVICE_NAME: true });
export type TracingSettings = { tracesUrl: string | null; serviceName: string | null };

export function tracingSettings(env: Env = process.env): TracingSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = tracingSettingsSchema.safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`));
  const { OTEL_EXPORTER_OTLP_ENDPOINT: base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces, OTEL_SERVICE_NAME: serviceName } = parsed.data;
  const tracesUrl = traces ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null);
  return { tracesUrl, serviceName: serviceName ?? null };
}

/**
 * What the console's start-up check of its webhook sources reads (lib/events/webhook-sources.ts),
 * parsed alone like tracingSettings: it runs in instrumentation.ts before anything calls config().
 */
const webhookSourceSchema = envSchema.pick({
  NODE_ENV: true,
  WEBHOOK_PROVIDERS: true,
  SNS_TOPIC_ARNS: true,
  WEBHOOK_SECRET: true,
  POSTMARK_WEBHOOK_USER: true,
  POSTMARK_WEBHOOK_PASSWORD: true,
  SENDGRID_WEBHOOK_PUBLIC_KEY: true,
  TWILIO_AUTH_TOKEN: true,
});
export type WebhookSourceSettings = z.infer<typeof webhookSourceSchema>;

export function webhookSourceSettings(env: Env = process.env): WebhookSourceSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = webhookSourceSchema.safeParse(present);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`));
  return parsed.data;
}

/**
 * What proxy.ts needs for the pages' security headers (lib/http/security-headers.ts), parsed alone
 * like tracingSettings: a proxy that threw on an unrelated setting would answer every page 500.
 */
const pageHeaderSchema = envSchema.pick({ NODE_ENV: true, PUBLIC_BASE_URL: true, NEXTAUTH_URL: true });

export function pageHeaderSettings(env: Env = process.env): { baseUrl: string | undefined; development: boolean } {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = pageHeaderSchema.safeParse(present);
  if (!parsed.success) return { baseUrl: undefined, development: present.NODE_ENV === 'development' };
  return { baseUrl: parsed.data.PUBLIC_BASE_URL ?? parsed.data.NEXTAUTH_URL, development: parsed.data.NODE_ENV === 'development' };
}

const settingNames = Object.keys(envSchema.shape) as (keyof Config)[];
let cached: { values: (string | undefined)[]; config: Config } | undefined;

/**
 * The process's configuration: loadConfig(process.env), parsed on first use and again only when
 * one of the settings it reads has changed (a test's environment, or a launcher exporting the
 * embedded server's URL). Comparing the settings is a few microseconds; nothing on the send
 * path calls this per notice (the worker reads it once and passes what it needs).
 */
export function config(): Config {
  const env = process.env;
  if (cached && settingNames.every((name, index) => env[name] === cached?.values[index])) return cached.config;
  const values = settingNames.map((name) => env[name]);
  cached = { values, config: loadConfig(env) };
  return cached.config;
}
