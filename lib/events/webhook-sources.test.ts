import { describe, expect, it } from 'vitest';
import { ConfigError, webhookSourceSettings } from '@/lib/config';
import { enabledWebhookSources, webhookSourceProblems as problemsOf } from './webhook-sources';

const webhookSourceProblems = (env: Record<string, string | undefined>) => {
  try {
    return problemsOf(webhookSourceSettings(env));
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
};

const topic = 'arn:aws:sns:eu-west-1:123456789012:ses-events';
const configured = {
  WEBHOOK_SECRET: 'w'.repeat(40),
  POSTMARK_WEBHOOK_USER: 'postmark',
  POSTMARK_WEBHOOK_PASSWORD: 'p'.repeat(20),
  SENDGRID_WEBHOOK_PUBLIC_KEY: 'MFkw',
  SNS_TOPIC_ARNS: topic,
  TWILIO_AUTH_TOKEN: 't'.repeat(32),
};

describe('webhook sources: name what you trust', () => {
  it('reads WEBHOOK_PROVIDERS: every provider by default, none for none', () => {
    expect(enabledWebhookSources('generic,postmark,sendgrid,ses,twilio')).toEqual(['generic', 'postmark', 'sendgrid', 'ses', 'twilio']);
    expect(enabledWebhookSources(' SES , generic ')).toEqual(['generic', 'ses']);
    expect(enabledWebhookSources('none')).toEqual([]);
  });

  it('in production, an enabled provider without its credential names the documented setting', () => {
    expect(webhookSourceProblems({ NODE_ENV: 'production', WEBHOOK_PROVIDERS: 'ses' })).toEqual([
      expect.stringMatching(/^SNS_TOPIC_ARNS is required in production for the ses webhook .*leave ses out of WEBHOOK_PROVIDERS/),
    ]);
    const all = webhookSourceProblems({ NODE_ENV: 'production' });
    expect(all).toHaveLength(5);
    for (const setting of [
      'WEBHOOK_SECRET',
      'POSTMARK_WEBHOOK_USER and POSTMARK_WEBHOOK_PASSWORD are',
      'SENDGRID_WEBHOOK_PUBLIC_KEY',
      'SNS_TOPIC_ARNS',
      'TWILIO_AUTH_TOKEN',
    ])
      expect(all.some((problem) => problem.startsWith(setting))).toBe(true);
    expect(webhookSourceProblems({ NODE_ENV: 'production', ...configured, POSTMARK_WEBHOOK_PASSWORD: undefined })).toEqual([
      expect.stringMatching(/^POSTMARK_WEBHOOK_PASSWORD is required in production for the postmark webhook/),
    ]);
  });

  it('accepts a production console whose enabled providers are configured, or that enables only what it configured', () => {
    expect(webhookSourceProblems({ NODE_ENV: 'production', ...configured })).toEqual([]);
    expect(webhookSourceProblems({ NODE_ENV: 'production', WEBHOOK_PROVIDERS: 'generic', WEBHOOK_SECRET: 'w'.repeat(40) })).toEqual([]);
    expect(webhookSourceProblems({ NODE_ENV: 'production', WEBHOOK_PROVIDERS: 'none' })).toEqual([]);
  });

  it('outside production nothing is required (an unconfigured route answers 503, SES trusts no topic), but a malformed ARN or provider name is refused', () => {
    expect(webhookSourceProblems({ NODE_ENV: 'development' })).toEqual([]);
    expect(webhookSourceProblems({ NODE_ENV: 'development', SNS_TOPIC_ARNS: `${topic},arn:aws:sqs:eu-west-1:1:q` })).toEqual([
      expect.stringMatching(/^SNS_TOPIC_ARNS: "arn:aws:sqs:eu-west-1:1:q" is not an SNS topic ARN/),
    ]);
    expect(webhookSourceProblems({ NODE_ENV: 'development', WEBHOOK_PROVIDERS: 'sess' })).toEqual([expect.stringMatching(/^WEBHOOK_PROVIDERS must be/)]);
  });
});
