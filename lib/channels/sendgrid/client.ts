import type { Client } from '@sendgrid/client';

export type SendgridClientSettings = { apiKey: string; apiBaseUrl: string; timeoutMs: number };

/**
 * The official client, loaded on first use (the transport's send or probe, the reconciler's
 * lookup) and configured once: our base URL, and a timeout; it never retries.
 */
export function lazySendgridClient(settings: SendgridClientSettings): () => Promise<Client> {
  let loading: Promise<Client> | null = null;
  return () =>
    (loading ??= import('@sendgrid/client').then((module) => {
      // The package's types declare `export =` its singleton; the class is exported beside it (as a static import sees it).
      const SendgridClient = Reflect.get(module, 'Client') as typeof Client;
      const client = new SendgridClient();
      client.setApiKey(settings.apiKey);
      // setApiKey resets the base URL to the region's host, so ours comes after it.
      client.setDefaultRequest('baseUrl', `${settings.apiBaseUrl.replace(/\/$/, '')}/`);
      // The client hands its default request to axios whole; its types do not list axios's timeout.
      client.setDefaultRequest(Object.assign({ url: '' }, { timeout: settings.timeoutMs }));
      return client;
    }));
}
