import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { parse, stringify } from 'yaml';

/**
 * Writes deploy/prometheus/prometheus-rule.yaml, the Prometheus Operator's PrometheusRule, from
 * deploy/prometheus/alerts.yml: `npx tsx scripts/prometheus-rule.ts` after editing the rules.
 * A PrometheusRule cannot load a rules file or a ConfigMap (prometheus-operator issue 5035) and
 * no kustomize generator writes a custom resource's spec, so this is the one copy, and
 * test/deploy-manifests.test.ts fails when it no longer matches alerts.yml.
 */
const root = path.resolve(import.meta.dirname, '..');
const rulesFile = path.join(root, 'deploy/prometheus/alerts.yml');
const target = path.join(root, 'deploy/prometheus/prometheus-rule.yaml');

const rules = parse(readFileSync(rulesFile, 'utf8')) as { groups: unknown[] };
const resource = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'PrometheusRule',
  metadata: { name: 'notice-ledger', labels: { 'app.kubernetes.io/name': 'notice-ledger' } },
  spec: { groups: rules.groups },
};
const header = [
  '# Generated from deploy/prometheus/alerts.yml by `npx tsx scripts/prometheus-rule.ts`: edit the rules',
  '# there and run it again (test/deploy-manifests.test.ts fails while the two differ). The runbook links',
  "# read the console's address from Prometheus's external label console_url (alerts.yml's header).",
].join('\n');
const text = await format(`${header}\n${stringify(resource, { lineWidth: 0 })}`, { ...(await resolveConfig(target)), parser: 'yaml' });
writeFileSync(target, text);
console.log(`wrote ${path.relative(root, target)}: ${rules.groups.length} groups`);
