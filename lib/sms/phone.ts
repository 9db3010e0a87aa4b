import { parsePhoneNumber } from 'awesome-phonenumber';
import { invalid, valid, type Result } from '@/lib/result';

export type PhoneResult = Result<{ e164: string; regionCode: string }>;

/**
 * A recipient's phone number as the producer wrote it → E.164 (`+14155550100`), checked against
 * the numbering plan of its country by libphonenumber (awesome-phonenumber). A number without
 * `+` is read in the recipient's country (`region` `US-CA` → US) when one is given.
 */
export function normalisePhone(text: string, region?: string | null): PhoneResult {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > 40) return invalid('must be a phone number such as +14155550100');
  const regionCode = region ? region.slice(0, 2) : undefined;
  const parsed = trimmed.startsWith('+') ? parsePhoneNumber(trimmed) : regionCode ? parsePhoneNumber(trimmed, { regionCode }) : null;
  if (!parsed) return invalid('must be an E.164 number such as +14155550100 (or a national number with the recipient region)');
  if (!parsed.valid) return invalid('is not a valid phone number for its country (E.164 such as +14155550100)');
  // Whether it can receive text is the carrier's to say (Twilio 21614, a definite refusal at send):
  // numbering plans do not tell a mobile from a fixed line everywhere (US: fixed-line-or-mobile).
  return valid({ e164: parsed.number.e164, regionCode: parsed.regionCode });
}

/** The ISO 3166 country of an E.164 number (`+14155550100` → `US`), or `ZZ` when none is known. */
export function countryOf(e164: string): string {
  const parsed = parsePhoneNumber(e164);
  return parsed.regionCode ?? 'ZZ';
}
