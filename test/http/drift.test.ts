// The drift verdict as a user gets it: a server process started as `npm start` runs it, files
// uploaded and scored over HTTP, the job read back. One file of each verdict: the service's own
// simulator at another seed and a third of the population over 30 days, without labels (`ok`, by
// the checks without outcomes); the same with amounts ×10 (`shifted`, by the amount); with its
// labels shuffled (`degraded`, by its outcomes). The download stays a plain CSV in each case. The
// whole matrix runs in-process in test/jobs/drift.test.ts.

import t from 'tap';
import { DEFAULT_SIMULATION, simulate, toCsv } from '../../src/domain/simulate.ts';
import { spawnServer } from '../support/processes.ts';
import { readCsv } from '../support/csv.ts';
import { shuffledLabels, unlabelled } from '../support/drift-files.ts';

const rows = simulate({
  seed: 9,
  customers: Math.round(DEFAULT_SIMULATION.customers * 0.3),
  merchants: Math.round(DEFAULT_SIMULATION.merchants * 0.3),
  days: 30,
});

t.test('a verdict per file, over HTTP', async (t) => {
  const server = await spawnServer({});
  t.teardown(() => server.stop('SIGKILL'));

  /** Uploads, scores and waits for the job; its summary and download. */
  async function score(name: string, csv: string) {
    const up = await fetch(`${server.base}/api/datasets/upload?filename=${name}.csv`, { method: 'POST', headers: { 'content-type': 'text/csv' }, body: csv });
    t.equal(up.status, 201, `${name}: uploaded`);
    const dataset = (await up.json()) as { id: string };
    const queued = await fetch(`${server.base}/api/datasets/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dataset_id: dataset.id, mode: 'balanced' }),
    });
    t.equal(queued.status, 202);
    const { id } = (await queued.json()) as { id: string };
    for (;;) {
      const job = (await (await fetch(`${server.base}/api/jobs/${id}`)).json()) as { status: string; summary: Record<string, any> };
      if (job.status === 'succeeded') {
        const download = await (await fetch(`${server.base}/api/jobs/${id}/download`)).text();
        return { summary: job.summary, download };
      }
      if (job.status === 'failed') throw new Error(`${name}: the job failed`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const own = await score('own', unlabelled(rows));
  t.equal(own.summary.drift.verdict, 'ok', JSON.stringify(own.summary.drift.signals));
  t.equal(own.summary.drift.basis, 'scores', 'no outcomes: the checks without them decide');
  t.equal(own.summary.drift.measured, null);
  t.equal(own.summary.drift.warning, null);
  t.ok(
    own.summary.drift.features.some((f: { in_verdict: boolean; psi: number }) => !f.in_verdict && f.psi >= 0.25),
    'history-dependent features moved, outside the verdict',
  );

  const tenfold = await score('tenfold', unlabelled(rows.map((r) => ({ ...r, amount: Math.round(r.amount * 1000) / 100 }))));
  t.equal(tenfold.summary.drift.verdict, 'shifted');
  t.ok(tenfold.summary.drift.reasons.includes('feature:amount'), tenfold.summary.drift.reasons.join(', '));
  t.equal(tenfold.summary.drift.basis, tenfold.summary.drift.reasons[0] === 'score_psi' ? 'scores' : 'features', 'the first check that found the shift');
  t.match(tenfold.summary.drift.warning, /^Drift: these scores are outside what the model was validated on \(/);

  const reshuffled = shuffledLabels(rows, 9);
  const labels = reshuffled.map((r) => r.label);
  const shuffled = await score('shuffled', toCsv(reshuffled));
  t.ok(shuffled.summary.metrics.roc_auc < 0.6, `the model fails on it (ROC AUC ${shuffled.summary.metrics.roc_auc.toFixed(3)})`);
  t.equal(shuffled.summary.drift.verdict, 'degraded');
  t.equal(shuffled.summary.drift.basis, 'outcomes');
  t.equal(shuffled.summary.drift.measured.fraud, labels.filter((l) => l === 1).length, 'every outcome counted');
  t.match(shuffled.summary.drift.warning, /^Degraded: /);

  for (const { download } of [own, tenfold, shuffled]) {
    const { header, rows: parsed } = await readCsv(download);
    t.equal(header[0], 'row', 'the download is a plain CSV: its header on the first line');
    t.equal(parsed.length, rows.length, 'and every row after it');
  }
});
