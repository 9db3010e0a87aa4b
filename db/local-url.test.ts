import { describe, expect, it } from 'vitest';
import { isLocalDatabaseUrl } from './local-url';

describe('isLocalDatabaseUrl', () => {
  it('is loopback, a socket directory or libpq’s default socket, and nothing else', () => {
    for (const url of [
      'postgres://u:p@localhost:5432/db',
      'postgres://u:p@127.0.0.1/db',
      'postgres://u:p@127.0.0.2/db',
      'postgres://u:p@[::1]:5432/db',
      'postgres:///db',
      'postgres://u@localhost/db?host=/run/postgresql',
    ])
      expect(isLocalDatabaseUrl(url), url).toBe(true);
    for (const url of [
      'postgres://u:p@db.example.com/db',
      'postgres://u:p@10.0.0.5/db',
      'postgres://u@localhost/db?host=db.example.com',
      'postgres://u@/db',
      'not a url',
    ])
      expect(isLocalDatabaseUrl(url), url).toBe(false);
  });
});
