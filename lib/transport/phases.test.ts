import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifySmtpPhase, classifyTwilioPhase, phaseTable, phaseTableMarkdown } from './phases';

/**
 * The table, row by row, written out a second time on purpose: changing what a phase means is a
 * decision about the ledger's safety (a row moved to nothing_left releases claims whose mail may
 * be out), so it must be changed here too, and in ARCHITECTURE.md.
 */
const expected = [
  'smtp dns no answer → nothing_left',
  'smtp connect no answer → nothing_left',
  'smtp tls no answer → nothing_left',
  'smtp greeting no answer → nothing_left',
  'smtp greeting any reply → nothing_left',
  'smtp ehlo no answer → nothing_left',
  'smtp ehlo any reply → nothing_left',
  'smtp auth no answer → nothing_left',
  'smtp auth 4xx → nothing_left',
  'smtp auth 5xx → config_broken',
  'smtp mail_from no answer → nothing_left',
  'smtp mail_from 4xx → nothing_left',
  'smtp mail_from 530 → config_broken',
  'smtp mail_from 5xx → config_broken',
  'smtp rcpt_to no answer → nothing_left',
  'smtp rcpt_to 4xx → nothing_left',
  'smtp rcpt_to 530 → config_broken',
  'smtp rcpt_to 5xx → recipient_refused',
  'smtp data no answer → nothing_left',
  'smtp data 4xx → nothing_left',
  'smtp data 5xx → recipient_refused',
  'smtp body no answer → outcome_unknown',
  'smtp body 4xx → nothing_left',
  'smtp body 5xx → recipient_refused',
  'twilio dns no answer → nothing_left',
  'twilio connect no answer → nothing_left',
  'twilio tls no answer → nothing_left',
  'twilio response no answer → outcome_unknown',
  'twilio response HTTP 401 → config_broken',
  'twilio response HTTP 403 → config_broken',
  'twilio response error 20003 → config_broken',
  'twilio response error 21212 → config_broken',
  'twilio response error 21606 → config_broken',
  'twilio response HTTP 429 → nothing_left',
  'twilio response HTTP 5xx → nothing_left',
  'twilio response documented refusal → recipient_refused',
  'twilio response other 4xx → nothing_left',
];

describe('the phase table', () => {
  it('has exactly the rows the design decided', () => {
    expect(phaseTable.map((row) => `${row.transport} ${row.phase} ${row.answer} → ${row.failure}`)).toEqual(expected);
  });

  it('is the table ARCHITECTURE.md shows', () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../ARCHITECTURE.md'), 'utf8');
    expect(doc).toContain(phaseTableMarkdown());
  });

  it('looks up the most specific answer: an exact code, then its class', () => {
    expect(classifySmtpPhase('mail_from', 530)).toBe('config_broken');
    expect(classifySmtpPhase('rcpt_to', 550)).toBe('recipient_refused');
    expect(classifySmtpPhase('rcpt_to', 530)).toBe('config_broken');
    expect(classifySmtpPhase('greeting', 421)).toBe('nothing_left');
    expect(classifyTwilioPhase('response', 400, 21610)).toBe('recipient_refused');
    expect(classifyTwilioPhase('response', 401, 20003)).toBe('config_broken');
    expect(classifyTwilioPhase('response', 400, 21601)).toBe('nothing_left');
    expect(classifyTwilioPhase('response', 503, 20500)).toBe('nothing_left');
  });

  it('never calls a phase it has no row for nothing_left', () => {
    expect(classifySmtpPhase('request', null)).toBe('outcome_unknown');
  });
});
