import { describe, expect, it } from 'vitest';
import { checkConsoleMutation, ownOrigins, sameOriginPath } from './same-origin';

const post = (headers: Record<string, string>, url = 'http://console.internal:3000/api/console/users') => new Request(url, { method: 'POST', headers });
const direct = { configuredUrls: [], trustedHops: 0 };

describe('the console’s own origin', () => {
  it('is the configured URLs and the Host the request was sent to; X-Forwarded-Host only behind trusted proxies', () => {
    const request = post({ host: 'console.internal:3000', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' });
    expect([...ownOrigins(request, direct)]).toEqual(['http://console.internal:3000']);
    expect([...ownOrigins(request, { configuredUrls: ['https://notices.example.com/', undefined], trustedHops: 0 })]).toEqual([
      'https://notices.example.com',
      'http://console.internal:3000',
    ]);
    // One proxy: the entry it wrote is the last one; a client's own header sits to its left.
    const proxied = post({ host: 'console.internal:3000', 'x-forwarded-host': 'evil.example, notices.example.com', 'x-forwarded-proto': 'https' });
    expect([...ownOrigins(proxied, { configuredUrls: [], trustedHops: 1 })]).toEqual(['https://notices.example.com']);
  });

  it('refuses a cross-site or same-site fetch, a missing or foreign Origin and a form content type; accepts its own JSON', () => {
    const own = { origin: 'http://console.internal:3000', host: 'console.internal:3000' };
    const kind = (headers: Record<string, string>, options?: { mediaTypes?: string[] }) => {
      const result = checkConsoleMutation(post(headers), direct, options);
      return result.ok ? 'ok' : result.refusal.kind;
    };
    expect(kind({ ...own, 'content-type': 'application/json; charset=utf-8', 'sec-fetch-site': 'same-origin' })).toBe('ok');
    expect(kind({ ...own, 'content-type': 'application/json' })).toBe('ok');
    expect(kind({ ...own, 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' })).toBe('forbidden');
    expect(kind({ ...own, 'content-type': 'application/json', 'sec-fetch-site': 'same-site' })).toBe('forbidden');
    expect(kind({ host: own.host, 'content-type': 'application/json' })).toBe('forbidden');
    expect(kind({ ...own, origin: 'null', 'content-type': 'application/json' })).toBe('forbidden');
    expect(kind({ ...own, origin: 'http://console.internal:3001', 'content-type': 'application/json' })).toBe('forbidden');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', ''])
      expect(kind({ ...own, 'content-type': type }), type).toBe('forbidden');
    // A route that takes a CSV body names it; a form type stays refused even if named.
    expect(kind({ ...own, 'content-type': 'text/csv' }, { mediaTypes: ['text/csv'] })).toBe('ok');
    expect(kind({ ...own, 'content-type': 'text/plain' }, { mediaTypes: ['text/plain'] })).toBe('forbidden');
  });
});

describe('sameOriginPath', () => {
  it('keeps a path on this console and turns anything that leaves it into /', () => {
    expect(sameOriginPath('/lookup?q=a@b.example#top')).toBe('/lookup?q=a@b.example#top');
    for (const value of [
      '/\\evil.example',
      '//evil.example',
      '/.//evil.example',
      '/a/../..//evil',
      'https://evil.example',
      'javascript:alert(1)',
      '',
      undefined,
      ['/a', '/b'],
    ])
      expect(sameOriginPath(value), JSON.stringify(value)).toBe('/');
  });
});
