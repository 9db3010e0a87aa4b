import type { ConsoleContract, ProducerContract, PublicContract, RecipientContract, RouteContract } from '@/lib/http/contract';
import * as audit from './console/audit';
import * as evidence from './console/evidence';
import * as controls from './console/controls';
import * as rollout from './console/rollout';
import * as failures from './console/failures';
import * as lookup from './console/lookup';
import * as overview from './console/overview';
import * as quarantine from './console/quarantine';
import * as received from './console/received';
import * as recipients from './console/recipients';
import * as replays from './console/replays';
import * as reports from './console/reports';
import * as templates from './console/templates';
import * as tokens from './console/tokens';
import * as users from './console/users';
import * as webhooks from './console/webhooks';
import * as windows from './console/windows';
import { getHealth, getReady } from './health';
import { scrapeConsoleMetrics } from './metrics';
import { evidenceRoutes } from './evidence';
import { noticeStatusRoutes } from './notices';
import { getOpenApiDocument } from './openapi';
import { producerRoutes } from './producer';
import { oneClickRoutes } from './one-click';
import { recipientPreferenceRoutes } from './recipient-preferences';
import { recipientRoutes } from './recipient';
import { providerRoutes } from './webhooks';
import { webhookEndpointRoutes } from './webhook-endpoints';

/**
 * Every HTTP route the console serves, as contracts. lib/api/routes.test.ts checks this list
 * against the route files under app/api/ (each export built from its contract, none missing),
 * and the authorization matrix (test/fuzz/authorization-matrix.test.ts) walks its console part.
 */

const audiences = new Set(['console', 'producer', 'provider', 'scrape', 'public', 'one_click', 'recipient']);

function isRouteContract(value: unknown): value is RouteContract {
  return (
    typeof value === 'object' && value !== null && 'audience' in value && typeof value.audience === 'string' && audiences.has(value.audience) && 'path' in value
  );
}

function contractsIn(module: Record<string, unknown>): RouteContract[] {
  return Object.values(module).filter(isRouteContract);
}

export const routeContracts: readonly RouteContract[] = [
  ...[
    audit,
    controls,
    evidence,
    failures,
    lookup,
    overview,
    quarantine,
    received,
    recipients,
    replays,
    reports,
    rollout,
    templates,
    tokens,
    users,
    webhooks,
    windows,
  ].flatMap(contractsIn),
  ...producerRoutes,
  ...noticeStatusRoutes,
  ...evidenceRoutes,
  ...providerRoutes,
  ...oneClickRoutes,
  ...recipientPreferenceRoutes,
  ...recipientRoutes,
  ...webhookEndpointRoutes,
  scrapeConsoleMetrics,
  getHealth,
  getReady,
  getOpenApiDocument,
];

export const consoleRouteContracts: readonly ConsoleContract[] = routeContracts.filter(
  (contract): contract is ConsoleContract => contract.audience === 'console',
);
export const producerRouteContracts: readonly ProducerContract[] = routeContracts.filter(
  (contract): contract is ProducerContract => contract.audience === 'producer',
);
export const publicRouteContracts: readonly PublicContract[] = routeContracts.filter((contract): contract is PublicContract => contract.audience === 'public');
export const recipientRouteContracts: readonly RecipientContract[] = routeContracts.filter(
  (contract): contract is RecipientContract => contract.audience === 'recipient',
);
