export type TroubledEndpointView = { id: string; url: string; failingSince: string | null; disabledAt: string | null; disabledReason: string | null };

const time = (iso: string) => new Date(iso).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * On every console page while a producer's webhook endpoint is failing, or was disabled for its
 * failures (it answered 410, or failed for WEBHOOK_DISABLE_AFTER): the producer hears nothing until
 * it is fixed and enabled again on the Webhooks page.
 */
export function WebhookBanner({ troubled, linked }: { troubled: TroubledEndpointView[]; linked: boolean }) {
  if (troubled.length === 0) return null;
  return (
    <div className="transport-banners" data-testid="webhooks-failing">
      {troubled.map((row) => (
        <div key={row.id} className={`banner ${row.disabledAt ? 'critical' : 'warning'}`} role="alert" data-endpoint={row.id}>
          <span className="icon">↯</span>
          <span>
            {row.disabledAt ? (
              <>
                <strong>Webhook endpoint {hostOf(row.url)} disabled</strong> since {time(row.disabledAt)} (
                {row.disabledReason === 'gone' ? 'it answered 410 Gone' : 'it failed for too long'}): no event is delivered to it.
              </>
            ) : (
              <>
                <strong>Webhook endpoint {hostOf(row.url)} failing</strong> since {row.failingSince ? time(row.failingSince) : 'recently'}: deliveries are
                retried on the schedule.
              </>
            )}{' '}
            {linked ? <a href={`/webhooks?endpoint=${row.id}`}>Webhooks</a> : 'An admin can fix it on the Webhooks page.'}
          </span>
        </div>
      ))}
    </div>
  );
}
