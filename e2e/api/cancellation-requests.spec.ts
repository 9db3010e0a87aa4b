import { expect, test } from '@/e2e/fixtures/test';

/** GET /api/v1/cancellation-requests through `next start`: the bearer token, the query's refusals, the page shape. */
test.describe('cancellation requests API', () => {
  test('lists with a cursor; refuses without a token, with a revoked one and with a bad query', async ({ request, seed }) => {
    const auth = { authorization: `Bearer ${seed.producer.token}` };
    const listed = await request.get('/api/v1/cancellation-requests?limit=5', { headers: auth });
    expect(listed.status()).toBe(200);
    const body = (await listed.json()) as { requests: unknown[]; nextCursor: string | null };
    expect(Array.isArray(body.requests)).toBe(true);
    expect(body.nextCursor === null || /^c1\.\d+$/.test(body.nextCursor)).toBe(true);
    expect((await request.get('/api/v1/cancellation-requests')).status()).toBe(401);
    expect((await request.get('/api/v1/cancellation-requests', { headers: { authorization: `Bearer ${seed.producer.revokedToken}` } })).status()).toBe(401);
    for (const query of ['cursor=abc', 'limit=0', 'since=tomorrow', 'unknown=1']) {
      const refused = await request.get(`/api/v1/cancellation-requests?${query}`, { headers: auth });
      expect(refused.status(), query).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toBe('invalid_request');
    }
  });
});
