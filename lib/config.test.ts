import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseDuration, publicBaseUrl } from './config';

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

describe('loadConfig', () => {
  it('applies documented defaults', () => {
    const config = loadConfig(base);
    expect(config.LEDGER_MODE).toBe('enforce');
    expect(config.QUARANTINE_AFTER).toBe(15 * 60_000);
    expect(config.QUEUE_BACKEND).toBe('pgboss');
    expect(config.QUEUE_NAME).toBe('notice-wakeup');
  });

  it('names a missing secret instead of defaulting it', () => {
    const problems = problemsOf({});
    expect(problems).toEqual([expect.stringMatching(/^NOTICE_KEY_SECRET is required/)]);
  });

  it('names each malformed variable', () => {
    const problems = problemsOf({ ...base, QUARANTINE_AFTER: 'soon', LEDGER_MODE: 'maybe', WORKER_CONCURRENCY: '-3', SMTP_URL: 'nope' });
    expect(problems.map((p) => p.split(' ')[0]).sort()).toEqual(['LEDGER_MODE', 'QUARANTINE_AFTER', 'SMTP_URL', 'WORKER_CONCURRENCY']);
    expect(problems.join('\n')).toContain('"soon" is not a duration');
  });

  it('builds recipient links on an https PUBLIC_BASE_URL, or http on a loopback host only', () => {
    expect(problemsOf({ ...base, PUBLIC_BASE_URL: 'https://notices.example.com' })).toEqual([]);
    expect(problemsOf({ ...base, PUBLIC_BASE_URL: 'http://localhost:3000' })).toEqual([]);
    expect(problemsOf({ ...base, PUBLIC_BASE_URL: 'http://127.0.0.1:3000' })).toEqual([]);
    expect(problemsOf({ ...base, PUBLIC_BASE_URL: 'http://notices.example.com' })).toEqual([expect.stringMatching(/^PUBLIC_BASE_URL must be an https URL/)]);
    expect(problemsOf({ ...base, PUBLIC_BASE_URL: 'https://notices.example.com/?next=evil' })).toEqual([
      expect.stringMatching(/^PUBLIC_BASE_URL must have no query/),
    ]);
    expect(publicBaseUrl(loadConfig({ ...base, NEXTAUTH_URL: 'https://console.example.com' }))).toBe('https://console.example.com');
    expect(publicBaseUrl(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://n.example.com', NEXTAUTH_URL: 'https://console.example.com' }))).toBe(
      'https://n.example.com',
    );
  });

  it('rejects a short secret', () => {
    expect(problemsOf({ NOTICE_KEY_SECRET: 'short' })).toEqual([expect.stringContaining('at least 32 characters')]);
  });

  it('requires AMQP_URL for the RabbitMQ backend', () => {
    expect(problemsOf({ ...base, QUEUE_BACKEND: 'rabbitmq' })).toEqual(['AMQP_URL is required when QUEUE_BACKEND=rabbitmq']);
  });

  it('refuses an SNS_CERT_DIR that is not a directory, naming it', () => {
    expect(problemsOf({ ...base, SNS_CERT_DIR: '/nonexistent/sns-certs' })).toEqual(['SNS_CERT_DIR is not a readable directory: /nonexistent/sns-certs']);
    expect(problemsOf({ ...base, SNS_CERT_DIR: import.meta.dirname })).toEqual([]);
  });

  it('refuses a ledger retention shorter than the longest delay plus the replay horizon', () => {
    expect(problemsOf({ ...base, RETENTION_LEDGER: '30d', MAX_DELAY: '60d', REPLAY_HORIZON: '30d' })).toEqual([
      expect.stringMatching(/^RETENTION_LEDGER must be at least/),
    ]);
  });

  it('ships defaults that pass their own retention check and reach a year-ahead legal window', () => {
    const settings = loadConfig(base);
    expect(settings.MAX_DELAY).toBe(400 * 86_400_000);
    expect(settings.RETENTION_LEDGER).toBeGreaterThanOrEqual(settings.MAX_DELAY + settings.REPLAY_HORIZON);
  });

  it('refuses the crash hook in production', () => {
    expect(loadConfig({ ...base, WORKER_CRASH_AT: 'after_claim' }).WORKER_CRASH_AT).toBe('after_claim');
    expect(problemsOf({ ...base, NODE_ENV: 'production', WORKER_CRASH_AT: 'after_claim' })).toEqual([expect.stringMatching(/^WORKER_CRASH_AT is a test hook/)]);
  });

  it('reads the smtp sink and SNS settings', () => {
    const parsed = loadConfig({
      ...base,
      SMTP_SINK_PORT: '0',
      SMTP_SINK_EVENTS_URL: 'http://127.0.0.1:3000/api/webhooks/generic',
      SMTP_SINK_EVENT_DELAY: '2s',
    });
    expect(parsed).toMatchObject({ SMTP_SINK_PORT: 0, SMTP_SINK_EVENT_DELAY: 2_000, SNS_TOPIC_ARNS: '' });
    expect(loadConfig(base).SMTP_SINK_PORT).toBe(2525);
    expect(problemsOf({ ...base, SMTP_SINK_EVENTS_URL: 'not a url' }).map((p) => p.split(' ')[0])).toEqual(['SMTP_SINK_EVENTS_URL']);
  });

  it('reads the console metrics token, refusing a short one', () => {
    expect(loadConfig(base).METRICS_TOKEN).toBeUndefined();
    expect(loadConfig({ ...base, METRICS_TOKEN: 'm'.repeat(16) }).METRICS_TOKEN).toBe('m'.repeat(16));
    expect(problemsOf({ ...base, METRICS_TOKEN: 'short' }).map((p) => p.split(' ')[0])).toEqual(['METRICS_TOKEN']);
  });

  it('reads the retention detail window and batch size', () => {
    expect(loadConfig(base).RETENTION_EVENT_DETAILS).toBe(30 * 86_400_000);
    expect(loadConfig({ ...base, RETENTION_EVENT_DETAILS: '7d', RETENTION_BATCH: '200' })).toMatchObject({
      RETENTION_EVENT_DETAILS: 7 * 86_400_000,
      RETENTION_BATCH: 200,
    });
    expect(problemsOf({ ...base, RETENTION_BATCH: '0' }).map((p) => p.split(' ')[0])).toEqual(['RETENTION_BATCH']);
  });

  it('reads the per-address sign-in limit: none trusted by default, each bad value named', () => {
    expect(loadConfig(base)).toMatchObject({ TRUSTED_PROXY_HOPS: 0, SIGN_IN_MAX_FAILURES_PER_ADDRESS: 20, SIGN_IN_ADDRESS_WINDOW: 15 * 60_000 });
    expect(loadConfig({ ...base, TRUSTED_PROXY_HOPS: '2', SIGN_IN_MAX_FAILURES_PER_ADDRESS: '50', SIGN_IN_ADDRESS_WINDOW: '1h' })).toMatchObject({
      TRUSTED_PROXY_HOPS: 2,
      SIGN_IN_MAX_FAILURES_PER_ADDRESS: 50,
      SIGN_IN_ADDRESS_WINDOW: 3_600_000,
    });
    expect(loadConfig({ ...base, TRUSTED_PROXY_HOPS: '10', SIGN_IN_ADDRESS_WINDOW: '1s' })).toMatchObject({
      TRUSTED_PROXY_HOPS: 10,
      SIGN_IN_ADDRESS_WINDOW: 1_000,
    });
    for (const [name, value] of [
      ['TRUSTED_PROXY_HOPS', '11'],
      ['TRUSTED_PROXY_HOPS', '-1'],
      ['TRUSTED_PROXY_HOPS', '1.5'],
      ['TRUSTED_PROXY_HOPS', 'one'],
      ['SIGN_IN_MAX_FAILURES_PER_ADDRESS', '0'],
      ['SIGN_IN_MAX_FAILURES_PER_ADDRESS', '2.5'],
      ['SIGN_IN_ADDRESS_WINDOW', 'soon'],
      ['SIGN_IN_ADDRESS_WINDOW', '0'],
      ['SIGN_IN_ADDRESS_WINDOW', '999ms'],
    ] as const) {
      expect(
        problemsOf({ ...base, [name]: value }).map((p) => p.split(' ')[0]),
        `${name}=${value}`,
      ).toEqual([name]);
    }
  });

  it('reads the idle queue poll interval: 50 ms by default, at least 50 ms, a duration', () => {
    expect(loadConfig(base).QUEUE_POLL_INTERVAL).toBe(50);
    expect(loadConfig({ ...base, QUEUE_POLL_INTERVAL: '2s' }).QUEUE_POLL_INTERVAL).toBe(2_000);
    for (const value of ['49ms', '0', 'often', '30d'])
      expect(
        problemsOf({ ...base, QUEUE_POLL_INTERVAL: value }).map((p) => p.split(' ')[0]),
        value,
      ).toEqual(['QUEUE_POLL_INTERVAL']);
  });

  it('reads the claim-to-commit objective the alert rule compares with: 250 ms by default, a positive duration', () => {
    expect(loadConfig(base).CLAIM_TO_COMMIT_OBJECTIVE).toBe(250);
    expect(loadConfig({ ...base, CLAIM_TO_COMMIT_OBJECTIVE: '1s' }).CLAIM_TO_COMMIT_OBJECTIVE).toBe(1_000);
    for (const value of ['0', '0ms', 'fast'])
      expect(
        problemsOf({ ...base, CLAIM_TO_COMMIT_OBJECTIVE: value }).map((p) => p.split(' ')[0]),
        value,
      ).toEqual(['CLAIM_TO_COMMIT_OBJECTIVE']);
  });

  it('reads the worker metrics bind address: loopback by default, an IP address or localhost, anything else named', () => {
    expect(loadConfig(base).WORKER_METRICS_HOST).toBe('127.0.0.1');
    for (const host of ['0.0.0.0', '::', '::1', '10.1.2.3', 'localhost'])
      expect(loadConfig({ ...base, WORKER_METRICS_HOST: host }).WORKER_METRICS_HOST).toBe(host);
    for (const host of ['999.1.1.1', 'metrics.internal', '127.0.0.1:9464', '0.0.0.0; rm -rf /', '[::1]']) {
      expect(
        problemsOf({ ...base, WORKER_METRICS_HOST: host }).map((p) => p.split(' ')[0]),
        host,
      ).toEqual(['WORKER_METRICS_HOST']);
    }
  });

  it('treats blank values as unset', () => {
    expect(loadConfig({ ...base, LEDGER_MODE: '' }).LEDGER_MODE).toBe('enforce');
  });
});

describe('parseDuration', () => {
  it.each([
    ['15m', 900_000],
    ['900', 900_000],
    ['2h', 7_200_000],
    ['250ms', 250],
    ['7d', 604_800_000],
  ])('%s → %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '1.5h', '-1s', '15 minutes'])('rejects %j', (text) => expect(parseDuration(text)).toBeNull());
});
