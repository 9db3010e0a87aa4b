import { describe, expect, it } from 'vitest';
import { classifySendError, correlationHeaders, providerIdFromResponse } from './transport';

const err = (fields: Record<string, unknown>, message = 'failed') => Object.assign(new Error(message), fields);

describe('classifySendError', () => {
  it('treats a 4xx reply as a definite, temporary rejection', () => {
    expect(classifySendError(err({ code: 'EMESSAGE', responseCode: 451, command: 'DATA' }))).toEqual({ kind: 'rejected', permanent: false, code: 451, errorClass: 'smtp_451' });
  });

  it('treats a 5xx reply as a definite, permanent rejection', () => {
    expect(classifySendError(err({ code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }))).toEqual({ kind: 'rejected', permanent: true, code: 550, errorClass: 'smtp_550' });
  });

  it('treats a refused connection as definitely not sent', () => {
    expect(classifySendError(err({ code: 'ESOCKET', command: 'CONN', syscall: 'connect', errno: -111 }, 'connect ECONNREFUSED 127.0.0.1:1'))).toMatchObject({ kind: 'rejected', permanent: false, errorClass: 'connect_failed' });
  });

  it('treats a timeout or a dropped connection as unknown', () => {
    expect(classifySendError(err({ code: 'ETIMEDOUT', command: 'CONN' }))).toEqual({ kind: 'unknown', errorClass: 'timeout' });
    expect(classifySendError(err({ code: 'ECONNECTION', command: 'CONN' }, 'Connection closed unexpectedly'))).toEqual({ kind: 'unknown', errorClass: 'connection_lost' });
  });

  it('does not trust a reply code carried by a lost connection', () => {
    expect(classifySendError(err({ code: 'ECONNECTION', responseCode: 451, command: 'CONN' }))).toMatchObject({ kind: 'unknown' });
  });
});

describe('providerIdFromResponse', () => {
  it('extracts the relay queue id', () => {
    expect(providerIdFromResponse('250 Ok: queued as 9F3A1C')).toBe('9F3A1C');
    expect(providerIdFromResponse('250 2.0.0 OK 1700000000 abc.123 - gsmtp')).toBe('OK 1700000000 abc.123 - gsmtp');
    expect(providerIdFromResponse(undefined)).toBeNull();
  });
});

describe('correlationHeaders', () => {
  it('carries the correlation in our header and in each relay metadata header', () => {
    const corr = 'ab'.repeat(16);
    expect(correlationHeaders(corr)).toEqual({
      'X-Notice-Correlation': corr,
      'X-SES-MESSAGE-TAGS': `notice_correlation=${corr}`,
      'X-PM-Metadata-notice_correlation': corr,
      'X-SMTPAPI': `{"unique_args":{"notice_correlation":"${corr}"}}`,
    });
  });
});
