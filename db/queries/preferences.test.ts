import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { listPreferenceChanges, listPreferences, preferenceFor, setPreference } from './preferences';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

describe('the preferences store', () => {
  it('opts a recipient out once, records where it came from, and treats a repeat as a no-op', async () => {
    const email = 'Opt.Out@Example.com';
    expect(await preferenceFor(t.db, { recipient: email, category: 'courtesy', channel: 'email' })).toBe('opted_in');
    const first = await setPreference(t.db, {
      recipient: email,
      category: 'courtesy',
      channel: 'email',
      state: 'opted_out',
      source: 'one_click',
      actor: 'abc',
    });
    expect(first).toEqual({ changed: true, from: null, to: 'opted_out' });
    const again = await setPreference(t.db, {
      recipient: email.toLowerCase(),
      category: 'courtesy',
      channel: 'email',
      state: 'opted_out',
      source: 'provider_event',
    });
    expect(again.changed).toBe(false);
    expect(await preferenceFor(t.db, { recipient: 'opt.out@example.com', category: 'courtesy', channel: 'email' })).toBe('opted_out');
    // Another channel is another preference.
    expect(await preferenceFor(t.db, { recipient: email, category: 'courtesy', channel: 'sms' })).toBe('opted_in');
    const history = await listPreferenceChanges(t.db, { recipient: email, channel: 'email' });
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ recipient: 'opt.out@example.com', fromState: null, toState: 'opted_out', source: 'one_click', actor: 'abc' });
  });

  it('opts back in with a second history row, newest first', async () => {
    const email = 'back@example.com';
    await setPreference(t.db, { recipient: email, category: 'courtesy', channel: 'email', state: 'opted_out', source: 'recipient_page' });
    await setPreference(t.db, {
      recipient: email,
      category: 'courtesy',
      channel: 'email',
      state: 'opted_in',
      source: 'support',
      actor: 'u:1',
      reason: 'asked by phone',
    });
    expect((await listPreferences(t.db, { recipient: email, channel: 'email' })).map((row) => row.state)).toEqual(['opted_in']);
    expect((await listPreferenceChanges(t.db, { recipient: email, channel: 'email' })).map((row) => [row.fromState, row.toState])).toEqual([
      ['opted_out', 'opted_in'],
      [null, 'opted_out'],
    ]);
  });

  it('never lets a required notice be opted out of', async () => {
    await expect(
      setPreference(t.db, { recipient: 'r@example.com', category: 'required', channel: 'email', state: 'opted_out', source: 'one_click' }),
    ).rejects.toThrow(RangeError);
    expect(await preferenceFor(t.db, { recipient: 'r@example.com', category: 'required', channel: 'email' })).toBe('required');
    // The table refuses it too, whoever writes.
    await expect(
      t.pool.query(
        `insert into recipient_preferences (recipient, category, channel, state, source) values ('r@example.com', 'required', 'email', 'opted_out', 'support')`,
      ),
    ).rejects.toThrow(/recipient_preferences_required_check/);
  });

  it('records one change when two writers opt out at once', async () => {
    const email = 'race@example.com';
    const writes = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.db.transaction((tx) => setPreference(tx, { recipient: email, category: 'courtesy', channel: 'email', state: 'opted_out', source: 'provider_event' })),
      ),
    );
    expect(writes.filter((write) => write.changed)).toHaveLength(1);
    expect(await listPreferenceChanges(t.db, { recipient: email, channel: 'email' })).toHaveLength(1);
  });
});
