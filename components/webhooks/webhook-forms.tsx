'use client';

import { useState, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import {
  consoleWebhookEventTypes,
  createWebhookEndpointContract,
  replayWebhookDeliveriesContract,
  rotateWebhookSecretContract,
  testWebhookEndpointContract,
  updateWebhookEndpointContract,
} from '@/lib/api/console/webhooks';
import { callConsole } from '@/lib/http/client';

type Message = { tone: 'ok' | 'critical'; text: string } | null;

function Note({ message }: { message: Message }) {
  return message ? (
    <div className={`banner ${message.tone}`} data-testid="webhooks-message" role="status">
      {message.text}
    </div>
  ) : null;
}

/** The secret, once: after create or rotate. Never fetched again; a reload loses it. */
function SecretOnce({ label, secret }: { label: string; secret: string }) {
  return (
    <div className="banner warning" data-testid="webhook-secret">
      <span>
        Copy the signing secret for <strong>{label}</strong> now; it will not be shown again:
        <br />
        <code style={{ userSelect: 'all' }} data-testid="webhook-secret-value">
          {secret}
        </code>
      </span>
    </div>
  );
}

export function CreateEndpointForm() {
  const router = useRouter();
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [message, setMessage] = useState<Message>(null);

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const url = String(form.get('url') ?? '').trim();
    const eventTypes = consoleWebhookEventTypes.filter((type) => form.get(`type-${type}`) === 'on');
    const description = String(form.get('description') ?? '').trim();
    const result = await callConsole(createWebhookEndpointContract, {
      url,
      eventTypes,
      reason: String(form.get('reason') ?? ''),
      ...(description ? { description } : {}),
    });
    if (!result.ok) return setMessage({ tone: 'critical', text: result.refusal.message });
    setMessage(null);
    setSecret({ url, secret: result.data.secret });
    formElement.reset();
    router.refresh();
  }

  return (
    <section className="card" data-testid="webhook-create">
      <h2>Add an endpoint</h2>
      <p className="muted small">
        Deliveries are signed (Standard Webhooks v1). https only in production; private, loopback and link-local addresses are refused unless
        WEBHOOK_ALLOWED_PRIVATE names them.
      </p>
      {secret ? <SecretOnce label={secret.url} secret={secret.secret} /> : null}
      <Note message={message} />
      <form onSubmit={(event) => void create(event)}>
        <div className="row">
          <div className="grow">
            <label htmlFor="webhook-url">URL</label>
            <input id="webhook-url" name="url" required placeholder="https://billing.example.com/hooks/notice-ledger" />
          </div>
          <div>
            <label htmlFor="webhook-description">Description</label>
            <input id="webhook-description" name="description" placeholder="billing service" />
          </div>
          <div className="grow">
            <label htmlFor="webhook-reason">Reason (audited)</label>
            <input id="webhook-reason" name="reason" required minLength={3} placeholder="billing listens for bounces" />
          </div>
        </div>
        <fieldset data-testid="webhook-types" style={{ margin: '12px 0', border: '1px solid #d5dbe5', borderRadius: 6, padding: '8px 12px' }}>
          <legend className="small">Event types (at least one)</legend>
          {consoleWebhookEventTypes.map((type) => (
            <label key={type} className="mono" style={{ display: 'inline-flex', alignItems: 'center', gap: 6, marginRight: 18, fontWeight: 400 }}>
              <input type="checkbox" name={`type-${type}`} defaultChecked /> {type}
            </label>
          ))}
        </fieldset>
        <button type="submit" className="primary" data-testid="webhook-create-submit">
          Add endpoint
        </button>
      </form>
    </section>
  );
}

/** Rotate, disable / enable, test send: each asks for a reason (audited) where it changes something. */
export function EndpointActions({ id, url, enabled }: { id: string; url: string; enabled: boolean }) {
  const router = useRouter();
  const [secret, setSecret] = useState<string | null>(null);
  const [message, setMessage] = useState<Message>(null);

  function askReason(question: string): string | null {
    const reason = window.prompt(question);
    return reason && reason.trim().length >= 3 ? reason.trim() : null;
  }

  async function rotate() {
    const reason = askReason(`Why rotate the secret of ${url}? The previous secret keeps signing during the overlap.`);
    if (!reason) return;
    const result = await callConsole(rotateWebhookSecretContract, { id, reason });
    if (!result.ok) return setMessage({ tone: 'critical', text: result.refusal.message });
    setSecret(result.data.secret);
    setMessage({ tone: 'ok', text: `Rotated; the previous secret signs too until ${result.data.previousKeysSignUntil.replace('T', ' ').slice(0, 19)} UTC.` });
    router.refresh();
  }

  async function toggle() {
    const reason = askReason(enabled ? `Why disable ${url}? Nothing is delivered to it while disabled.` : `Why enable ${url} again?`);
    if (!reason) return;
    const result = await callConsole(updateWebhookEndpointContract, { id, enabled: !enabled, reason });
    setMessage(result.ok ? { tone: 'ok', text: enabled ? 'Disabled.' : 'Enabled.' } : { tone: 'critical', text: result.refusal.message });
    router.refresh();
  }

  async function test() {
    const result = await callConsole(testWebhookEndpointContract, { id });
    setMessage(
      result.ok
        ? { tone: 'ok', text: `Test event ${result.data.webhookId} queued; its attempts appear in the log.` }
        : { tone: 'critical', text: result.refusal.message },
    );
    router.refresh();
  }

  return (
    <div data-testid="webhook-actions" data-endpoint={id}>
      <div style={{ display: 'flex', gap: 6, flexWrap: 'wrap' }}>
        <button type="button" onClick={() => void test()} disabled={!enabled} data-testid="webhook-test">
          Test send
        </button>
        <button type="button" onClick={() => void rotate()} data-testid="webhook-rotate">
          Rotate secret
        </button>
        <button type="button" onClick={() => void toggle()} data-testid="webhook-toggle">
          {enabled ? 'Disable' : 'Enable'}
        </button>
      </div>
      {secret ? <SecretOnce label={url} secret={secret} /> : null}
      <Note message={message} />
    </div>
  );
}

/** Replays one delivery (from the log) again now, with a reason. */
export function ReplayOneButton({ endpointId, eventId }: { endpointId: string; eventId: number }) {
  const router = useRouter();
  const [done, setDone] = useState<string | null>(null);
  async function replay() {
    const reason = window.prompt('Why replay this delivery? (audited)');
    if (!reason || reason.trim().length < 3) return;
    const result = await callConsole(replayWebhookDeliveriesContract, { endpointId, eventId, includeDelivered: true, reason: reason.trim() });
    setDone(result.ok ? `${result.data.replayed} queued` : result.refusal.message);
    router.refresh();
  }
  return done ? (
    <span className="small" data-testid="webhook-replay-one-done">
      {done}
    </span>
  ) : (
    <button type="button" className="small" onClick={() => void replay()} data-testid="webhook-replay-one">
      Replay
    </button>
  );
}

/** Replays a time range's deliveries to one endpoint (the failed ones, or all). */
export function ReplayRangeForm({ endpoints }: { endpoints: { id: string; url: string }[] }) {
  const router = useRouter();
  const [message, setMessage] = useState<Message>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const toIso = (value: FormDataEntryValue | null) => (value ? new Date(`${String(value)}:00Z`).toISOString() : undefined);
    const result = await callConsole(replayWebhookDeliveriesContract, {
      endpointId: String(form.get('endpoint') ?? ''),
      from: toIso(form.get('from')),
      to: toIso(form.get('to')),
      includeDelivered: form.get('all') === 'on',
      reason: String(form.get('reason') ?? ''),
    });
    setMessage(result.ok ? { tone: 'ok', text: `${result.data.replayed} deliveries queued again.` } : { tone: 'critical', text: result.refusal.message });
    router.refresh();
  }

  if (endpoints.length === 0) return null;
  return (
    <section className="card" data-testid="webhook-replay-range">
      <h2>Replay a time range</h2>
      <p className="muted small">
        Deliveries created in the range (UTC) are due again now, with the same webhook-id, so a consumer that de-duplicates is safe.
      </p>
      <Note message={message} />
      <form onSubmit={(event) => void submit(event)}>
        <div className="row">
          <div>
            <label htmlFor="replay-endpoint">Endpoint</label>
            <select id="replay-endpoint" name="endpoint">
              {endpoints.map((endpoint) => (
                <option key={endpoint.id} value={endpoint.id}>
                  {endpoint.url}
                </option>
              ))}
            </select>
          </div>
          <div>
            <label htmlFor="replay-from">From (UTC)</label>
            <input id="replay-from" name="from" type="datetime-local" required />
          </div>
          <div>
            <label htmlFor="replay-to">To (UTC)</label>
            <input id="replay-to" name="to" type="datetime-local" required />
          </div>
          <div className="grow">
            <label htmlFor="replay-reason">Reason (audited)</label>
            <input id="replay-reason" name="reason" required minLength={3} placeholder="receiver lost a night of events" />
          </div>
        </div>
        <label style={{ display: 'inline-flex', gap: 6, margin: '8px 0', fontWeight: 400 }}>
          <input type="checkbox" name="all" /> also the deliveries that succeeded
        </label>
        <div>
          <button type="submit" className="primary" data-testid="webhook-replay-range-submit">
            Replay range
          </button>
        </div>
      </form>
    </section>
  );
}
