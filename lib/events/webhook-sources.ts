import { ConfigError, webhookSourceSettings, type WebhookSourceSettings } from '@/lib/config';
import { isSnsTopicArn } from './sns';
import type { WebhookProvider } from '@/lib/api/fields';

/**
 * Which provider webhooks the console accepts, and what each needs to believe a request: the
 * operator names the providers (WEBHOOK_PROVIDERS) and, in production, every named provider's
 * credential must be set or the console does not start (instrumentation.ts). A provider left out
 * is refused before its request is read further (lib/events/webhook.ts).
 */

export const webhookSourceNames = ['generic', 'postmark', 'sendgrid', 'ses', 'twilio'] as const;
export type WebhookSourceName = (typeof webhookSourceNames)[number];

/** The setting a route's provider is named by: both Twilio routes are `twilio`. */
export function sourceOf(provider: WebhookProvider): WebhookSourceName {
  return provider === 'twilio_inbound' ? 'twilio' : provider;
}

/** WEBHOOK_PROVIDERS as parsed by lib/config.ts: unset is every provider, `none` is none. */
export function enabledWebhookSources(setting: string): WebhookSourceName[] {
  const names = setting
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (names.includes('none')) return [];
  return webhookSourceNames.filter((name) => names.includes(name));
}

/** SNS_TOPIC_ARNS: comma-separated, blanks dropped. */
export function snsTopicArnsOf(setting: string): string[] {
  return setting
    .split(',')
    .map((arn) => arn.trim())
    .filter(Boolean);
}

/** Per provider: the settings it cannot authenticate a request without, by their documented names. */
function missingSettings(name: WebhookSourceName, settings: WebhookSourceSettings): string[] {
  const unset = (setting: keyof WebhookSourceSettings) => !settings[setting];
  switch (name) {
    case 'generic':
      return unset('WEBHOOK_SECRET') ? ['WEBHOOK_SECRET'] : [];
    case 'postmark':
      return (['POSTMARK_WEBHOOK_USER', 'POSTMARK_WEBHOOK_PASSWORD'] as const).filter(unset);
    case 'sendgrid':
      return unset('SENDGRID_WEBHOOK_PUBLIC_KEY') ? ['SENDGRID_WEBHOOK_PUBLIC_KEY'] : [];
    case 'ses':
      return snsTopicArnsOf(settings.SNS_TOPIC_ARNS).length === 0 ? ['SNS_TOPIC_ARNS'] : [];
    case 'twilio':
      return unset('TWILIO_AUTH_TOKEN') ? ['TWILIO_AUTH_TOKEN'] : [];
  }
}

/**
 * What stops the console from starting: an SNS_TOPIC_ARNS entry that is no topic ARN (anywhere),
 * and in production an enabled provider without its credential. Each problem names the setting
 * and the way out.
 */
export function webhookSourceProblems(settings: WebhookSourceSettings): string[] {
  const problems: string[] = [];
  for (const arn of snsTopicArnsOf(settings.SNS_TOPIC_ARNS)) {
    if (!isSnsTopicArn(arn)) problems.push(`SNS_TOPIC_ARNS: "${arn.slice(0, 100)}" is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<topic>)`);
  }
  if (settings.NODE_ENV !== 'production') return problems;
  const enabled = enabledWebhookSources(settings.WEBHOOK_PROVIDERS);
  for (const name of enabled) {
    const missing = missingSettings(name, settings);
    if (missing.length === 0) continue;
    problems.push(
      `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required in production for the ${name} webhook` +
        `${name === 'ses' ? ' (the SNS topic ARNs whose notifications are believed)' : ''}: set ${missing.length > 1 ? 'them' : 'it'},` +
        ` or leave ${name} out of WEBHOOK_PROVIDERS (now: ${enabled.join(',') || 'none'})`,
    );
  }
  return problems;
}

/** For the console's start-up hook: the environment's webhook settings, or a ConfigError naming each problem. */
export function assertWebhookSources(settings: WebhookSourceSettings = webhookSourceSettings()): void {
  const problems = webhookSourceProblems(settings);
  if (problems.length > 0) throw new ConfigError(problems);
}
