import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, envSchema, loadConfig, MAX_TIMER_MS, type Config } from '@/lib/config';
import { fuzzParameters, hostileString, plausibleString } from './arbitraries';

/**
 * lib/config.ts `loadConfig` with arbitrary environments: it returns a config or throws a
 * ConfigError whose every line names the variable at fault — never another error — and
 * never echoes a secret's value.
 */

const names = Object.keys(envSchema.shape) as (keyof Config)[];
const secretNames = ['NOTICE_KEY_SECRET', 'NEXTAUTH_SECRET', 'WEBHOOK_SECRET', 'METRICS_TOKEN', 'OIDC_CLIENT_SECRET', 'POSTMARK_WEBHOOK_PASSWORD'] as const;
const durationNames = names.filter((name) => {
  const value = loadConfig({ NOTICE_KEY_SECRET: 'k'.repeat(32) })[name];
  return typeof value === 'number' && /AFTER|TIMEOUT|DELAY|EVERY|RETRY|RETENTION|HORIZON/.test(name);
});

const timerNames = ['SWEEP_EVERY', 'VISIBILITY_TIMEOUT', 'SMTP_TIMEOUT', 'SMTP_SINK_EVENT_DELAY'] as const;

const envValue = fc.oneof(
  hostileString,
  plausibleString,
  fc.constantFrom(
    '15m',
    '0',
    '0s',
    '1ms',
    '9'.repeat(30),
    '9'.repeat(400) + 'd',
    '30d',
    '24d',
    '25d',
    '2147483647ms',
    '2147483648ms',
    '-5m',
    '1.5h',
    '15 m',
    ' 15m ',
    '15M',
    'Infinity',
    'NaN',
    '1e3',
    '0x10',
    'true',
    'enforce',
    'pgboss',
    'rabbitmq',
    'http://',
    'amqp://guest:guest@127.0.0.1:5672',
    'postgres://u:p@localhost/db',
    '21:00-08:00',
    '24:00-08:00',
  ),
  fc.constantFrom('k'.repeat(31), 'k'.repeat(32), 'k'.repeat(100_000)),
);

function messageOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
    return '';
  } catch (error) {
    return error instanceof Error ? error.message : '';
  }
}

const environments = fc.tuple(
  fc.dictionary(fc.constantFrom(...names), envValue, { maxKeys: 8 }),
  fc.dictionary(
    hostileString.filter((name) => name.length < 50),
    envValue,
    { maxKeys: 2 },
  ),
  fc.boolean(),
);

describe('loadConfig with arbitrary environments', () => {
  it('returns a config or throws a ConfigError naming the variable, never anything else', () => {
    fc.assert(
      fc.property(environments, ([known, unknown, withSecret]) => {
        const env: Record<string, string> = { ...unknown, ...(withSecret ? { NOTICE_KEY_SECRET: 'fuzz-notice-key-secret-0123456789abcdef' } : {}), ...known };
        let loaded: Config;
        try {
          loaded = loadConfig(env);
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
          if (!(error instanceof ConfigError)) return;
          expect(error.problems.length).toBeGreaterThan(0);
          for (const problem of error.problems)
            expect(
              names.some((name) => problem.startsWith(name)),
              problem.slice(0, 200),
            ).toBe(true);
          for (const name of secretNames) {
            const value = env[name];
            const echoedElsewhere = Object.entries(env).some(
              ([other, text]) => other !== name && !(secretNames as readonly string[]).includes(other) && value !== undefined && text.includes(value),
            );
            // A secret that happens to be one of the schema's own words ("rabbitmq" in QUEUE_BACKEND's
            // message) is in the error whatever the secret is: the same environment with the
            // secret masked (same length, so the same validity) says it too.
            const schemaWord = value !== undefined && messageOf({ ...env, [name]: 'x'.repeat(value.length) }).includes(value);
            if (value && value.length >= 8 && !echoedElsewhere && !schemaWord)
              expect(error.message.includes(value), `${name}'s value is in the error`).toBe(false);
          }
          expect(error.message).not.toMatch(/\n\s+at\s/);
          return;
        }
        for (const name of durationNames) {
          const value = loaded[name];
          expect(Number.isSafeInteger(value), `${name}=${JSON.stringify(env[name] ?? '(default)').slice(0, 60)} became ${String(value)}`).toBe(true);
        }
        // These drive setTimeout/setInterval, which fire at once past 2^31-1 ms.
        for (const name of timerNames) expect(loaded[name], `${name}=${String(env[name])}`).toBeLessThanOrEqual(MAX_TIMER_MS);
      }),
      {
        ...fuzzParameters(500),
        examples: [
          [[{ QUARANTINE_AFTER: '9'.repeat(400) }, {}, true]],
          [[{ SWEEP_EVERY: '30d' }, {}, true]],
          [[{ VISIBILITY_TIMEOUT: '2147483648ms' }, {}, true]],
        ],
      },
    );
  });
});
