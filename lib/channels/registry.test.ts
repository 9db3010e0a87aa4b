import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@/lib/config';
import { phaseTableMarkdown } from '@/lib/transport/phases';
import { createAcceptedLookup, createEmailTransport, httpProviderRows, transports } from './registry';
import { classifySendgridError } from './sendgrid/transport';
import { classifySesError } from './ses/transport';

/**
 * The HTTP providers' rows of the phase table, written out a second time on purpose (as
 * lib/transport/phases.test.ts does for SMTP and Twilio): a row moved to nothing_left releases
 * claims whose message may be out, so it must be changed here and in ARCHITECTURE.md too.
 */
const expected = [
  'postmark dns no answer → nothing_left',
  'postmark connect no answer → nothing_left',
  'postmark tls no answer → nothing_left',
  'postmark response no answer → outcome_unknown',
  'postmark response HTTP 401 → config_broken',
  'postmark response error 10 → config_broken',
  'postmark response error 400 → config_broken',
  'postmark response error 401 → config_broken',
  'postmark response error 405 → config_broken',
  'postmark response error 412 → config_broken',
  'postmark response error 406 → recipient_refused',
  'postmark response error 300 → recipient_refused',
  'postmark response HTTP 429 → nothing_left',
  'postmark response HTTP 5xx → outcome_unknown',
  'postmark response other 4xx → nothing_left',
  'ses dns no answer → nothing_left',
  'ses connect no answer → nothing_left',
  'ses tls no answer → nothing_left',
  'ses response no answer → outcome_unknown',
  'ses response HTTP 403 → config_broken',
  'ses response error AccountSuspendedException → config_broken',
  'ses response error SendingPausedException → config_broken',
  'ses response error MailFromDomainNotVerifiedException → config_broken',
  'ses response error NotFoundException → config_broken',
  'ses response error MessageRejected → recipient_refused',
  'ses response error LimitExceededException → nothing_left',
  'ses response HTTP 429 → nothing_left',
  'ses response HTTP 5xx → outcome_unknown',
  'ses response other 4xx → nothing_left',
  'sendgrid dns no answer → nothing_left',
  'sendgrid connect no answer → nothing_left',
  'sendgrid tls no answer → nothing_left',
  'sendgrid response no answer → outcome_unknown',
  'sendgrid response HTTP 401 → config_broken',
  'sendgrid response HTTP 403 → config_broken',
  'sendgrid response HTTP 400 → recipient_refused',
  'sendgrid response HTTP 413 → recipient_refused',
  'sendgrid response HTTP 429 → nothing_left',
  'sendgrid response HTTP 5xx → outcome_unknown',
  'sendgrid response other 4xx → nothing_left',
];

const base = { NOTICE_KEY_SECRET: 'x'.repeat(32) };

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('the channel registry', () => {
  it('has one line per transport, each with its own rows of the phase table', () => {
    expect(Object.keys(transports).sort()).toEqual(['postmark', 'sendgrid', 'ses', 'smtp', 'twilio']);
    for (const [name, provider] of Object.entries(transports)) {
      expect(provider.rows.length).toBeGreaterThan(0);
      expect(new Set(provider.rows.map((row) => row.transport))).toEqual(new Set([name]));
    }
  });

  it('holds exactly the HTTP providers’ rows the design decided, and ARCHITECTURE.md shows them', () => {
    expect(httpProviderRows().map((row) => `${row.transport} ${row.phase} ${row.answer} → ${row.failure}`)).toEqual(expected);
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../ARCHITECTURE.md'), 'utf8');
    expect(doc).toContain(phaseTableMarkdown(httpProviderRows()));
  });

  it('makes the transport EMAIL_PROVIDER names, SMTP by default', () => {
    expect(createEmailTransport(loadConfig(base), { maxConnections: 1 }).name).toBe('smtp');
    for (const [provider, settings] of [
      ['postmark', { POSTMARK_SERVER_TOKEN: 'token' }],
      ['ses', { SES_REGION: 'eu-west-1' }],
      ['sendgrid', { SENDGRID_API_KEY: 'SG.key' }],
    ] as const) {
      const transport = createEmailTransport(loadConfig({ ...base, EMAIL_PROVIDER: provider, ...settings }), { maxConnections: 1 });
      expect(transport.name).toBe(provider);
      transport.close();
    }
  });

  it('asks Postmark and SendGrid what they accepted; SMTP and SES are not asked (SES resolves from its events)', () => {
    expect(createAcceptedLookup(loadConfig(base))).toBeNull();
    expect(createAcceptedLookup(loadConfig({ ...base, EMAIL_PROVIDER: 'ses', SES_REGION: 'eu-west-1' }))).toBeNull();
    expect(createAcceptedLookup(loadConfig({ ...base, EMAIL_PROVIDER: 'postmark', POSTMARK_SERVER_TOKEN: 'token' }))?.provider).toBe('postmark');
    expect(createAcceptedLookup(loadConfig({ ...base, EMAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: 'SG.key' }))?.provider).toBe('sendgrid');
  });

  it('refuses a RECONCILE_GIVE_UP not longer than RECONCILE_AFTER', () => {
    expect(problemsOf({ ...base, RECONCILE_AFTER: '30m', RECONCILE_GIVE_UP: '30m' })).toEqual([
      'RECONCILE_GIVE_UP must be longer than RECONCILE_AFTER: the provider is asked between the two',
    ]);
  });

  it('refuses a provider without its credentials, by name, and an unknown provider', () => {
    expect(problemsOf({ ...base, EMAIL_PROVIDER: 'postmark' })).toEqual(['POSTMARK_SERVER_TOKEN is required when EMAIL_PROVIDER=postmark']);
    expect(problemsOf({ ...base, EMAIL_PROVIDER: 'sendgrid' })).toEqual(['SENDGRID_API_KEY is required when EMAIL_PROVIDER=sendgrid']);
    expect(problemsOf({ ...base, EMAIL_PROVIDER: 'ses' })).toEqual(['SES_REGION is required when EMAIL_PROVIDER=ses']);
    expect(problemsOf({ ...base, EMAIL_PROVIDER: 'ses', SES_REGION: 'eu-west-1', SES_ACCESS_KEY_ID: 'AKID' })).toEqual([
      'SES_ACCESS_KEY_ID and SES_SECRET_ACCESS_KEY: set both, or neither for the default credential chain',
    ]);
    expect(problemsOf({ ...base, EMAIL_PROVIDER: 'ses', SES_REGION: 'Ireland' })).toEqual([expect.stringMatching(/^SES_REGION must be an AWS region/)]);
    expect(problemsOf({ ...base, EMAIL_PROVIDER: 'mailgun' })).toEqual(['EMAIL_PROVIDER must be smtp, postmark, ses or sendgrid']);
    expect(problemsOf({ ...base, EMAIL_PROVIDER: 'postmark', POSTMARK_SERVER_TOKEN: 't', POSTMARK_API_BASE_URL: 'ftp://x' })).toEqual([
      expect.stringMatching(/^POSTMARK_API_BASE_URL must be an http\(s\) URL/),
    ]);
    // The credentials of a provider not chosen are not asked for.
    expect(problemsOf(base)).toEqual([]);
  });
});

describe('each provider’s documented errors, classified', () => {
  it('SES: an error name before its status, a status class after', () => {
    const answer = (name: string, status: number) => classifySesError(Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } }));
    expect(answer('AccountSuspendedException', 400)).toMatchObject({ kind: 'rejected', failure: 'config_broken', errorClass: 'ses_AccountSuspendedException' });
    expect(answer('MessageRejected', 400)).toMatchObject({ kind: 'rejected', permanent: true, failure: 'recipient_refused' });
    expect(answer('LimitExceededException', 400)).toMatchObject({ kind: 'rejected', permanent: false, failure: 'nothing_left' });
    expect(answer('InvalidClientTokenId', 403)).toMatchObject({ kind: 'rejected', failure: 'config_broken' });
    expect(answer('TooManyRequestsException', 429)).toMatchObject({ kind: 'rejected', failure: 'nothing_left' });
    expect(answer('InternalServiceErrorException', 500)).toMatchObject({ kind: 'unknown' });
    expect(answer('BadRequestException', 400)).toMatchObject({ kind: 'rejected', failure: 'nothing_left' });
    expect(classifySesError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', syscall: 'connect' }))).toMatchObject({
      kind: 'rejected',
      failure: 'nothing_left',
      errorClass: 'connect_failed',
    });
    expect(classifySesError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toEqual({
      kind: 'unknown',
      errorClass: 'connection_lost',
      phase: 'response',
    });
  });

  it('SendGrid: by the status of its ResponseError; an axios error by where it stopped', () => {
    const answer = (code: number) => classifySendgridError(Object.assign(new Error('refused'), { code, response: { headers: {}, body: {} } }));
    expect(answer(401)).toMatchObject({ failure: 'config_broken' });
    expect(answer(403)).toMatchObject({ failure: 'config_broken' });
    expect(answer(400)).toMatchObject({ failure: 'recipient_refused', permanent: true });
    expect(answer(429)).toMatchObject({ failure: 'nothing_left' });
    expect(answer(502)).toMatchObject({ kind: 'unknown' });
    expect(classifySendgridError(Object.assign(new Error('timeout of 300ms exceeded'), { code: 'ECONNABORTED' }))).toMatchObject({
      kind: 'unknown',
      errorClass: 'timeout',
    });
    expect(classifySendgridError(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }))).toMatchObject({
      kind: 'rejected',
      failure: 'nothing_left',
      phase: 'dns',
    });
  });
});
