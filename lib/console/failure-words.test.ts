import { describe, expect, it } from 'vitest';
import { explainAttempt, explainErrorClass, explainFailure } from './words';

describe('failures in words', () => {
  it('says what each error class means, and falls back to its name', () => {
    expect(explainErrorClass('connect_failed')).toBe('the mail relay refused the connection, so nothing was sent');
    expect(explainErrorClass('smtp_451')).toBe('the mail server said to try later (SMTP 451)');
    expect(explainErrorClass('smtp_550')).toBe('the mail server refused it (SMTP 550)');
    expect(explainErrorClass('twilio_21610')).toBe('Twilio refused it (error 21610)');
    expect(explainErrorClass('greeting_timeout')).toBe('greeting timeout');
  });

  it('a window that closed while retrying names the failure; a policy detail keeps its own words', () => {
    expect(explainAttempt('suppressed_policy', 'connect_failed')).toBe(
      'Suppressed because its send window closed while it was being retried after the mail relay refused the connection, so nothing was sent (it is never sent late)',
    );
    expect(explainAttempt('suppressed_policy', 'window_missed')).toBe(
      'Suppressed because its send window closed before it could be sent (it is never sent late)',
    );
    expect(explainAttempt('suppressed_policy', 'opted_out')).toBe('Suppressed because the recipient had opted out of courtesy notices by email');
  });

  it('each kind on the Failures page', () => {
    expect(explainFailure({ kind: 'retrying', attempts: 9, lastErrorClass: 'smtp_451', lastAttempt: null })).toBe(
      'Retrying after 9 temporary failures: the mail server said to try later (SMTP 451); it is retried until its window closes',
    );
    expect(explainFailure({ kind: 'deferred', attempts: 0, lastErrorClass: null, lastAttempt: { outcome: 'deferred', detail: 'quiet_hours' } })).toBe(
      "Deferred because of the recipient's quiet hours",
    );
    expect(
      explainFailure({ kind: 'window_missed', attempts: 0, lastErrorClass: null, lastAttempt: { outcome: 'suppressed_policy', detail: 'window_missed' } }),
    ).toBe('Window missed: its send window closed before it could be sent (it is never sent late)');
    expect(explainFailure({ kind: 'failed', attempts: 1, lastErrorClass: 'render_failed', lastAttempt: null })).toBe(
      'Failed: its template could not be rendered',
    );
  });
});
