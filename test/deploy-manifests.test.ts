import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { ConfigMap, Namespace, Service, ServiceAccount } from 'kubernetes-models/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { envSchema } from '@/lib/config';

/**
 * The deployment files as their tools read them: every overlay of deploy/kubernetes rendered by
 * `kubectl kustomize` and each object checked against its Kubernetes (or Prometheus Operator)
 * schema with kubernetes-models, and compose.yaml parsed. In both, every environment variable a
 * process of ours is given must be one lib/config.ts reads, a credential must come from a Secret
 * (or, in compose, the env file or a value marked local-demo-only), and every command must be a
 * script of package.json, run as it is. Each checker is also run on a planted bad fixture, so none of them
 * passes by finding nothing.
 */

const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const overlaysDir = path.join(root, 'deploy/kubernetes/overlays');
const overlays = readdirSync(overlaysDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [field: string]: unknown };
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: unknown; fieldRef?: unknown } };
type Container = {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
};
type Probe = { httpGet?: { path: string; port: string | number } };

/** The kinds the manifests may hold, each with the model that validates it. A kind not here fails the test. */
const models = [ConfigMap, Namespace, Service, ServiceAccount, Deployment, PodDisruptionBudget, HorizontalPodAutoscaler, ServiceMonitor, PrometheusRule];
const modelFor = new Map<string, (typeof models)[number]>(models.map((model) => [`${model.apiVersion}/${model.kind}`, model]));

/** Every name lib/config.ts reads: the parsed schema and the few read beside it (processEnv). */
const configNames = new Set([...Object.keys(envSchema.shape), ...[...read('lib/config.ts').matchAll(/process\.env\.([A-Z0-9_]+)/g)].map((m) => m[1] ?? '')]);
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

/** Settings that carry a credential: a Secret's, never a manifest's. The URLs hold passwords. */
const isCredential = (name: string) => /SECRET|TOKEN|PASSWORD|_KEYS?$/.test(name) || ['DATABASE_URL', 'AMQP_URL', 'SMTP_URL'].includes(name);

type KubectlKustomize = { ok: true; command: string } | { ok: false; reason: string };

/**
 * kubectl with kustomize v5: this kind of machine ships it (/usr/bin/kubectl), so CI has it. Its
 * absence fails the test rather than skipping it: Debian's kubernetes-client (1.20, kustomize
 * v2.0.3) cannot render these kustomizations, and nothing else here can.
 */
function findKubectlKustomize(): KubectlKustomize {
  const version = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (version.error) return { ok: false, reason: `kubectl is not installed (${version.error.message}); it must have kustomize v5 (kubectl 1.27 or newer)` };
  const kustomize = /Kustomize Version: v(\d+)\./.exec(version.stdout)?.[1];
  if (!kustomize || Number(kustomize) < 5) return { ok: false, reason: `kubectl's kustomize is older than v5: ${version.stdout.trim()}` };
  return { ok: true, command: 'kubectl' };
}

function renderOverlay(overlay: string): K8sObject[] {
  const kubectl = findKubectlKustomize();
  if (!kubectl.ok) throw new Error(kubectl.reason);
  const run = spawnSync(kubectl.command, ['kustomize', path.join(overlaysDir, overlay)], { encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(`kubectl kustomize deploy/kubernetes/overlays/${overlay} failed: ${run.stderr}`);
  return parseAllDocuments(run.stdout).map((doc) => doc.toJS() as K8sObject);
}

/** Schema problems of each object, named by kind/name; a kind without a model is one. */
function schemaProblems(objects: K8sObject[]): string[] {
  return objects.flatMap((object) => {
    const where = `${object.kind}/${object.metadata?.name}`;
    const Model = modelFor.get(`${object.apiVersion}/${object.kind}`);
    if (!Model) return [`${where}: no schema for ${object.apiVersion} ${object.kind} (add its model to this test)`];
    try {
      new Model(object as never).validate();
      return [];
    } catch (error) {
      return [`${where}: ${error instanceof Error ? error.message : String(error)}`];
    }
  });
}

const podContainers = (object: K8sObject): Container[] => {
  const spec = (object.spec as { template?: { spec?: { containers?: Container[]; initContainers?: Container[] } } } | undefined)?.template?.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
};

/**
 * What the manifests give our processes: each variable with where it comes from, the configMap's
 * keys for envFrom; and the problems no variable check could see (an envFrom secretRef hides its names).
 */
function containerEnvironment(objects: K8sObject[]): {
  vars: { where: string; name: string; source: 'value' | 'secret' | 'configMap' | 'field' }[];
  problems: string[];
} {
  const configMaps = new Map(
    objects.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, Object.keys((o.data as Record<string, string>) ?? {})]),
  );
  const vars: { where: string; name: string; source: 'value' | 'secret' | 'configMap' | 'field' }[] = [];
  const problems: string[] = [];
  for (const object of objects) {
    for (const container of podContainers(object)) {
      const where = `${object.kind}/${object.metadata.name} container ${container.name}`;
      for (const env of container.env ?? []) {
        const source = env.valueFrom?.secretKeyRef ? 'secret' : env.valueFrom?.configMapKeyRef ? 'configMap' : env.valueFrom?.fieldRef ? 'field' : 'value';
        vars.push({ where, name: env.name, source });
      }
      for (const from of container.envFrom ?? []) {
        if (from.secretRef) problems.push(`${where}: envFrom secretRef ${from.secretRef.name} hides the names it sets; use secretKeyRef per variable`);
        if (from.configMapRef) {
          const keys = configMaps.get(from.configMapRef.name);
          if (!keys) problems.push(`${where}: envFrom names ConfigMap ${from.configMapRef.name}, which the overlay does not render`);
          for (const key of keys ?? []) vars.push({ where: `${where} (ConfigMap ${from.configMapRef.name})`, name: key, source: 'configMap' });
        }
      }
    }
  }
  return { vars, problems };
}

/** Variables lib/config.ts does not read, and credentials that do not come from a Secret. */
function manifestEnvironmentProblems(objects: K8sObject[]): string[] {
  const { vars, problems } = containerEnvironment(objects);
  for (const { where, name, source } of vars) {
    if (!configNames.has(name)) problems.push(`${where}: ${name} is not a setting of lib/config.ts`);
    if (isCredential(name) && source !== 'secret') problems.push(`${where}: ${name} is a credential and must come from a secretKeyRef, not a ${source}`);
  }
  const inlinedSecrets = objects
    .filter((o) => o.kind === 'Secret')
    .map((o) => `Secret/${o.metadata.name} is inlined: reference it, create it outside the manifests`);
  return [...problems, ...inlinedSecrets];
}

/**
 * A command must be a package.json script's text, run as it is: not through npm, which exits on
 * SIGTERM and leaves its child running (a worker would lose its grace to finish in-flight sends).
 */
function commandProblem(where: string, command: readonly string[] | undefined): string | null {
  if (!command || command.length === 0) return `${where}: no command (the image's default is the console; say which process this is)`;
  const text = command.join(' ');
  if (command[0] === 'npm') return `${where}: ${text} runs through npm, which does not pass SIGTERM on: run the script's text`;
  return Object.values(scripts).includes(text) ? null : `${where}: ${text} is no script of package.json`;
}

function manifestCommandProblems(objects: K8sObject[]): string[] {
  return objects.flatMap((object) =>
    podContainers(object).flatMap((container) => {
      const problem = commandProblem(`${object.kind}/${object.metadata.name} container ${container.name}`, [
        ...(container.command ?? []),
        ...(container.args ?? []),
      ]);
      return problem ? [problem] : [];
    }),
  );
}

type ComposeService = {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number | boolean | null>;
  env_file?: string | string[];
  profiles?: string[];
  deploy?: { replicas?: number };
};
type Compose = { services: Record<string, ComposeService> };

const APP_IMAGE = 'notice-ledger:local';
const LOCAL_DEMO = 'local-demo-only';

/** Names set by `NAME=value` lines of an env file. */
const envFileNames = (text: string) => [...text.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1] ?? '');

/** The same checks on compose: our services' variables (inline and in the env file), credentials, commands. */
function composeProblems(compose: Compose, envFile: { name: string; text: string }): string[] {
  const problems: string[] = [];
  for (const name of envFileNames(envFile.text)) if (!configNames.has(name)) problems.push(`${envFile.name}: ${name} is not a setting of lib/config.ts`);
  for (const [service, spec] of Object.entries(compose.services)) {
    if (spec.image !== APP_IMAGE) continue;
    for (const [name, value] of Object.entries(spec.environment ?? {})) {
      if (!configNames.has(name)) problems.push(`compose service ${service}: ${name} is not a setting of lib/config.ts`);
      if (isCredential(name) && !(typeof value === 'string' && value.includes(LOCAL_DEMO)))
        problems.push(`compose service ${service}: ${name} is a credential: put it in ${envFile.name}, or mark a local demo value ${LOCAL_DEMO}`);
    }
    const problem = commandProblem(`compose service ${service}`, spec.command);
    if (problem) problems.push(problem);
  }
  return problems;
}

const parseCompose = (text: string) => parse(text, { merge: true }) as Compose;

describe('the Kubernetes manifests (deploy/kubernetes)', () => {
  it('has overlays to render, and kubectl with kustomize v5 to render them', () => {
    expect(overlays).toEqual(expect.arrayContaining(['production', 'staging']));
    const kubectl = findKubectlKustomize();
    expect(kubectl.ok ? 'found' : kubectl.reason).toBe('found');
  });

  describe.each(overlays)('overlays/%s', (overlay) => {
    // Rendered once, by the first case that asks: a missing kubectl or a broken kustomization fails every case.
    let cache: K8sObject[] | undefined;
    const rendered = () => (cache ??= renderOverlay(overlay));
    const named = (kind: string, name: string) => rendered().find((o) => o.kind === kind && o.metadata.name === name);

    it('renders, and every object passes its Kubernetes or Prometheus Operator schema', () => {
      const objects = rendered();
      expect(objects.length).toBeGreaterThan(10);
      expect(schemaProblems(objects)).toEqual([]);
    });

    it('gives the processes only settings of lib/config.ts, credentials from Secrets, no Secret inlined', () => {
      const objects = rendered();
      expect(containerEnvironment(objects).vars.length).toBeGreaterThan(10);
      expect(manifestEnvironmentProblems(objects)).toEqual([]);
    });

    it("runs package.json's scripts: the console and the worker from one image", () => {
      const objects = rendered();
      expect(manifestCommandProblems(objects)).toEqual([]);
      const [consoleContainer] = podContainers(named('Deployment', 'notice-ledger-console') as K8sObject);
      const [workerContainer] = podContainers(named('Deployment', 'notice-ledger-worker') as K8sObject);
      expect(consoleContainer?.command?.join(' ')).toBe(scripts.start);
      expect(workerContainer?.command?.join(' ')).toBe(scripts.worker);
      expect(consoleContainer?.image).toBe(workerContainer?.image);
    });

    it('probes the documented health endpoints on the ports the processes listen on', () => {
      const probes = (name: string) => {
        const container = podContainers(named('Deployment', name) as K8sObject)[0] as Container;
        const port = (probe?: Probe) => container.ports?.find((p) => p.name === probe?.httpGet?.port)?.containerPort;
        return {
          live: [container.livenessProbe?.httpGet?.path, port(container.livenessProbe)],
          ready: [container.readinessProbe?.httpGet?.path, port(container.readinessProbe)],
          start: [container.startupProbe?.httpGet?.path, port(container.startupProbe)],
        };
      };
      expect(probes('notice-ledger-console')).toEqual({ live: ['/api/health', 3000], ready: ['/api/ready', 3000], start: ['/api/health', 3000] });
      expect(probes('notice-ledger-worker')).toEqual({ live: ['/healthz', 9464], ready: ['/readyz', 9464], start: ['/healthz', 9464] });
      // The endpoints exist where the probes look: the console's routes, the worker's metrics server.
      expect(read('app/api/health/route.ts')).toContain('export const GET');
      expect(read('app/api/ready/route.ts')).toContain('export const GET');
      expect(read('worker/metrics-server.ts')).toMatch(/path === '\/healthz'[\s\S]*path === '\/readyz'/);
      const workerPort = podContainers(named('Deployment', 'notice-ledger-worker') as K8sObject)[0]?.env?.find((env) => env.name === 'WORKER_METRICS_PORT');
      expect(envSchema.shape.WORKER_METRICS_PORT.parse(workerPort?.value), 'the worker listens where it is probed').toBe(9464);
    });

    it('budgets disruptions for both, autoscales the workers, and selects what exists', () => {
      const objects = rendered();
      const podLabels = (name: string) =>
        (named('Deployment', name)?.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
      const selects = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
        selector !== undefined && Object.entries(selector).every(([key, value]) => labels[key] === value);
      for (const name of ['notice-ledger-console', 'notice-ledger-worker']) {
        const budget = objects.find(
          (o) =>
            o.kind === 'PodDisruptionBudget' &&
            selects((o.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, podLabels(name)),
        );
        expect(budget, `a PodDisruptionBudget for ${name}`).toBeDefined();
        const service = named('Service', name);
        expect(selects((service?.spec as { selector?: Record<string, string> }).selector, podLabels(name)), `Service ${name} selects its pods`).toBe(true);
        const monitor = named('ServiceMonitor', name);
        expect(selects((monitor?.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, service?.metadata.labels ?? {})).toBe(
          true,
        );
      }
      const hpa = objects.find((o) => o.kind === 'HorizontalPodAutoscaler');
      expect((hpa?.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef).toEqual({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'notice-ledger-worker',
      });
      expect((named('Deployment', 'notice-ledger-worker')?.spec as { replicas?: number }).replicas, 'the HPA owns the worker count').toBeUndefined();
    });

    it('scrapes under the job names the alert rules use, with the tokens from the Secret', () => {
      const objects = rendered();
      const jobs = new Set([...read('deploy/prometheus/alerts.yml').matchAll(/job="([^"]+)"/g)].map((m) => m[1]));
      jobs.add('notice-ledger-worker').add('notice-ledger-console');
      const monitors = objects.filter((o) => o.kind === 'ServiceMonitor');
      for (const job of jobs) {
        const service = objects.find((o) => o.kind === 'Service' && Object.values(o.metadata.labels ?? {}).includes(job ?? ''));
        const monitor = monitors.find((m) => {
          const spec = m.spec as { jobLabel?: string; selector: { matchLabels: Record<string, string> } };
          return spec.jobLabel !== undefined && service?.metadata.labels?.[spec.jobLabel] === job;
        });
        expect(monitor, `a ServiceMonitor whose job label is ${job}`).toBeDefined();
      }
      const tokens = monitors.map(
        (m) => (m.spec as { endpoints: { authorization?: { credentials?: { key: string } } }[] }).endpoints[0]?.authorization?.credentials?.key,
      );
      expect(tokens.sort()).toEqual(['METRICS_TOKEN', 'WORKER_METRICS_TOKEN']);
    });

    it('carries the alert rules of deploy/prometheus/alerts.yml and the dashboard of deploy/grafana unchanged', () => {
      const objects = rendered();
      const rule = objects.find((o) => o.kind === 'PrometheusRule');
      const expected = (parse(read('deploy/prometheus/alerts.yml')) as { groups: unknown }).groups;
      expect((rule?.spec as { groups: unknown }).groups, 'prometheus-rule.yaml is stale: run npx tsx scripts/prometheus-rule.ts').toEqual(expected);
      const dashboard = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard === '1');
      expect((dashboard?.data as Record<string, string>)['notice-ledger.json']).toBe(read('deploy/grafana/notice-ledger.json'));
    });
  });

  it('the checkers find a planted unknown variable, an inlined credential, a hidden secret, a bad command and a bad schema', () => {
    const deployment = (container: Partial<Container>): K8sObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'planted' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i', ...container }] } },
      },
    });
    const settings: K8sObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings' },
      data: { QUEUE_BACKNED: 'rabbitmq', AMQP_URL: 'amqp://u:p@h' },
    };
    const planted = [
      settings,
      deployment({
        command: ['node', '--import', 'tsx', 'worker/mian.ts'],
        env: [
          { name: 'NOTICE_KEY_SECRET', value: 'inlined' },
          { name: 'DATABSE_URL', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
        ],
        envFrom: [{ configMapRef: { name: 'settings' } }, { secretRef: { name: 's' } }],
      }),
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'inlined' }, stringData: { NOTICE_KEY_SECRET: 'x' } },
    ];
    const problems = manifestEnvironmentProblems(planted).join('\n');
    for (const expected of [
      'DATABSE_URL is not a setting',
      'QUEUE_BACKNED is not a setting',
      'NOTICE_KEY_SECRET is a credential and must come from a secretKeyRef, not a value',
      'AMQP_URL is a credential and must come from a secretKeyRef, not a configMap',
      'envFrom secretRef s hides',
      'Secret/inlined is inlined',
    ])
      expect(problems).toContain(expected);
    expect(manifestCommandProblems(planted).join('\n')).toContain('node --import tsx worker/mian.ts is no script of package.json');
    expect(commandProblem('x', ['npm', 'run', 'worker'])).toContain('runs through npm');
    expect(commandProblem('x', ['next', 'start', '-p', '4000'])).toContain('is no script');
    expect(commandProblem('x', ['node', '--enable-source-maps', 'dist/worker/main.mjs'])).toBeNull();
    expect(commandProblem('x', ['node', '--import', 'tsx', 'worker/main.ts'])).toContain('is no script');
    const badSchema = schemaProblems([deployment({ ports: [{ name: 'http', containerPort: 'http' as never }] })]).join('\n');
    expect(badSchema).toContain('containerPort must be integer');
    expect(schemaProblems([{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }])).toEqual([
      'Secret/s: no schema for v1 Secret (add its model to this test)',
    ]);
  });
});

describe('compose.yaml', () => {
  const compose = parseCompose(read('compose.yaml'));
  const envFile = { name: 'notice-ledger.env.example', text: read('notice-ledger.env.example') };

  it('parses: PostgreSQL, RabbitMQ, the console, two workers, and the SMTP sink behind a profile', () => {
    const services = compose.services;
    expect(services.postgres?.image).toMatch(/^postgres:/);
    expect(services.rabbitmq?.image).toMatch(/^rabbitmq:4/);
    expect(services.console?.command?.join(' ')).toBe(scripts.start);
    expect(services.worker?.command?.join(' ')).toBe(scripts.worker);
    expect(services['smtp-sink']?.command?.join(' ')).toBe(scripts['smtp-sink']);
    expect(services.worker?.deploy?.replicas).toBe(2);
    expect(services['smtp-sink']?.profiles).toEqual(['smtp-sink']);
    for (const name of ['console', 'worker', 'smtp-sink']) {
      expect(services[name]?.image).toBe(APP_IMAGE);
      expect(services[name]?.env_file).toBe('notice-ledger.env');
    }
  });

  it("gives our services only settings of lib/config.ts, credentials from the env file or marked local-demo, package.json's scripts as commands", () => {
    expect(composeProblems(compose, envFile)).toEqual([]);
    // The env file documents every secret the processes need.
    expect(envFileNames(envFile.text)).toEqual(
      expect.arrayContaining(['NOTICE_KEY_SECRET', 'NEXTAUTH_SECRET', 'WEBHOOK_SECRET', 'METRICS_TOKEN', 'WORKER_METRICS_TOKEN', 'SMTP_URL']),
    );
  });

  it('the checker finds a planted unknown variable, an unmarked credential and a bad command', () => {
    const planted = parseCompose(
      [
        'x-app: &app',
        `  image: ${APP_IMAGE}`,
        'services:',
        '  worker:',
        '    <<: *app',
        '    command: [npm, run, wrker]',
        '    environment:',
        '      QUEUE_BAKEND: rabbitmq',
        '      NOTICE_KEY_SECRET: 0123456789abcdef0123456789abcdef',
        `      DATABASE_URL: postgres://u:${LOCAL_DEMO}@postgres/db`,
        '  console:',
        '    <<: *app',
        '    command: [next, start, --port, "4000"]',
      ].join('\n'),
    );
    const problems = composeProblems(planted, { name: 'planted.env', text: 'NOTICE_KEY_SECRET=\nSMTP_URLL=smtp://x\n' }).join('\n');
    expect(problems).toContain('worker: QUEUE_BAKEND is not a setting');
    expect(problems).toContain('worker: NOTICE_KEY_SECRET is a credential');
    expect(problems).not.toContain('DATABASE_URL');
    expect(problems).toContain('planted.env: SMTP_URLL is not a setting');
    expect(problems).toContain('npm run wrker runs through npm');
    expect(problems).toContain('next start --port 4000 is no script');
  });
});
