import type { Config } from '@/lib/config';
import type { EmailTransport } from '@/lib/mail/transport';
import type { SmsTransport } from '@/lib/sms/transport';
import type { PhaseRow } from '@/lib/transport/phases';
import type { AcceptedLookup } from './types';

/**
 * One entry of the registry (lib/channels/registry.ts): a transport's rows of the phase table and
 * how it is made from the configuration. An email transport is chosen by EMAIL_PROVIDER; the SMS
 * transport (Twilio) is made when its settings are complete.
 */
export type EmailProvider = {
  medium: 'email';
  rows: readonly PhaseRow[];
  /** `maxConnections`: the worker's concurrency, for a transport that pools connections (SMTP). */
  create: (config: Config, options: { maxConnections: number }) => EmailTransport;
  /**
   * How the provider reconciler (lib/ledger/provider-reconcile.ts) asks what this provider
   * accepted: Postmark's Messages API, SendGrid's Email Logs. null where it cannot be asked: SMTP
   * (a relay keeps no searchable log) and SES (its events resolve claims, lib/events/).
   */
  lookup: ((config: Config) => AcceptedLookup) | null;
};

export type SmsProvider = {
  medium: 'sms';
  rows: readonly PhaseRow[];
  /** The transport and its sender, or the names of the settings that are missing. */
  create: (config: Config) => { ok: true; transport: SmsTransport; sender: string } | { ok: false; missing: string[] };
};
