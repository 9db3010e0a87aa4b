/**
 * Twilio's refusals that say a number will never take a text from us, whatever we send: the
 * ones a required notice falls back to email for (lib/jobs/sms-fallback.ts), in words for the
 * lookup timeline (lib/console/words.ts).
 */
const refusals: Record<string, string> = {
  '21610': 'the recipient replied STOP',
  '21211': 'the number is not a valid phone number',
  '21614': 'the number is not a mobile number',
  '21635': 'the number is a landline',
  '30006': 'the number is a landline or its carrier is unreachable',
};

/** Words for a refusal code, or null for a code that never falls back. */
export function smsRefusalText(code: string): string | null {
  return Object.hasOwn(refusals, code) ? (refusals[code] ?? null) : null;
}
