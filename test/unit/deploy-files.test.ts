import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { createMetrics } from '../../src/metrics/index.js';
import { packageRoot } from '../../src/paths.js';

const read = (path: string) => readFileSync(join(packageRoot, path), 'utf8');

/**
 * Every series name the process exports while its database answers (the totals read from it are
 * left out while it does not): the registry's, with a histogram's three series.
 */
async function exportedNames(): Promise<Set<string>> {
  const metrics = createMetrics({ process: 'test:1' });
  metrics.state.setDatabase({
    streams: [],
    records: 0,
    nonFinalQueued: 0,
    nonFinalDue: 0,
    rejected: 0,
    conflicts: 0,
    deferredIndexes: 0,
  });
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
    }
  }
  return names;
}

/** The `ledger_indexer_*` names a PromQL expression uses. */
function queried(expr: string): string[] {
  return [...expr.matchAll(/\bledger_indexer_[a-zA-Z0-9_]+/g)].map((m) => m[0]);
}

/** Every `expr` string anywhere in a parsed document. */
function expressions(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(expressions);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, inner]) =>
      key === 'expr' && typeof inner === 'string' ? [inner] : expressions(inner),
    );
  }
  return [];
}

describe('the dashboard and alert rules in deploy/', () => {
  it('query only metrics the process exports', async () => {
    const exported = await exportedNames();
    assert.ok(exported.has('ledger_indexer_pages_written_total'), 'the registry was read');
    const dashboard = JSON.parse(read('deploy/grafana/ledger-indexer.json')) as {
      uid: string;
      panels: unknown[];
    };
    const alerts = parse(read('deploy/prometheus/alerts.yml')) as {
      groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
    };
    const all = [...expressions(dashboard), ...expressions(alerts)];
    assert.ok(all.length > 20, `${all.length} expressions found`);
    const unknown = [...new Set(all.flatMap(queried))].filter((name) => !exported.has(name));
    assert.deepEqual(unknown, []);
    for (const expr of all) assert.ok(queried(expr).length > 0, `queries a ledger_indexer_ metric: ${expr}`);
  });

  it('alert on what the operator must know, each with a summary', () => {
    const alerts = parse(read('deploy/prometheus/alerts.yml')) as {
      groups: Array<{ rules: Array<{ alert: string; expr: string; annotations: { summary?: string } }> }>;
    };
    const rules = alerts.groups.flatMap((g) => g.rules);
    for (const name of [
      'LedgerIndexerStreamStalled',
      'LedgerIndexerLagGrowing',
      'LedgerIndexerErrorStreak',
      'LedgerIndexerRejectedRecordsRising',
      'LedgerIndexerBackfillIncomplete',
      'LedgerIndexerIndexesDeferred',
      'LedgerIndexerRateLimited',
      'LedgerIndexerRequestBudgetExhausted',
    ]) {
      const rule = rules.find((r) => r.alert === name);
      assert.ok(rule?.annotations.summary, `${name} is defined with a summary`);
    }
  });

  it('wire Prometheus to the rules and the workers, and Grafana to Prometheus and the dashboard', () => {
    const prometheus = parse(read('deploy/prometheus/prometheus.yml')) as {
      rule_files: string[];
      scrape_configs: Array<{ job_name: string; dns_sd_configs: Array<{ names: string[]; port: number }> }>;
    };
    assert.deepEqual(prometheus.rule_files, ['/etc/prometheus/alerts.yml']);
    const job = prometheus.scrape_configs.find((c) => c.job_name === 'ledger-indexer');
    assert.deepEqual(job?.dns_sd_configs[0], {
      names: ['worker'],
      type: 'A',
      port: 9464,
      refresh_interval: '30s',
    });
    const source = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')) as {
      datasources: Array<{ uid: string; url: string }>;
    };
    assert.equal(source.datasources[0]?.uid, 'prometheus');
    const dashboard = JSON.parse(read('deploy/grafana/ledger-indexer.json')) as {
      panels: Array<{ datasource?: { uid: string } }>;
    };
    for (const panel of dashboard.panels)
      if (panel.datasource) assert.equal(panel.datasource.uid, 'prometheus');
    const compose = parse(read('docker-compose.yml')) as {
      services: Record<
        string,
        { profiles?: string[]; volumes?: string[]; environment?: Record<string, string> }
      >;
    };
    for (const name of ['prometheus', 'grafana'])
      assert.deepEqual(compose.services[name]?.profiles, ['monitoring']);
    const mounted = [
      ...(compose.services.prometheus?.volumes ?? []),
      ...(compose.services.grafana?.volumes ?? []),
    ].map((v) => v.split(':')[0]);
    for (const path of [
      './deploy/prometheus/prometheus.yml',
      './deploy/prometheus/alerts.yml',
      './deploy/grafana/provisioning',
      './deploy/grafana/ledger-indexer.json',
    ]) {
      assert.ok(mounted.includes(path), `${path} is mounted`);
      assert.ok(existsSync(join(packageRoot, path)), `${path} exists`);
    }
    assert.equal(compose.services.worker?.environment?.LEDGER_HTTP_PORT, '9464');
  });
});
