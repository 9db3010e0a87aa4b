/** What the SMS channel loads with its first text (./sms.ts): the country of a number, the body's render and its segments. */
export { countryOf } from '@/lib/sms/phone';
export { renderSmsBody, segmentsOf } from '@/lib/sms/render';
