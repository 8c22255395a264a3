// Chart data: curves start and end where they must, and counts add up.

import t from 'tap';
import { precisionRecallCurve, reliabilityCurve, rocCurve, scoreHistograms } from '../../src/training/curves.ts';

const scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05];
const labels = [1, 1, 0, 1, 0, 1, 0, 0, 1, 0];

t.test('ROC runs from (0,0) to (1,1), thinned to the limit', async (t) => {
  const roc = rocCurve(scores, labels);
  t.same(roc[0], { fpr: 0, tpr: 0, threshold: 1 });
  t.same(roc[roc.length - 1], { fpr: 1, tpr: 1, threshold: 0.05 });
  t.equal(rocCurve(scores, labels, 4).length, 4);
});

t.test('precision–recall ends at full recall', async (t) => {
  const pr = precisionRecallCurve(scores, labels);
  t.equal(pr[0]!.precision, 1);
  t.equal(pr[pr.length - 1]!.recall, 1);
});

t.test('reliability and histograms count every row', async (t) => {
  const rel = reliabilityCurve(scores, labels);
  t.equal(
    rel.reduce((n, b) => n + b.count, 0),
    scores.length,
  );
  const h = scoreHistograms(scores, labels);
  t.equal(
    h.fraud.reduce((a, b) => a + b, 0),
    5,
  );
  t.equal(
    h.legitimate.reduce((a, b) => a + b, 0),
    5,
  );
  t.equal(h.edges.length, 21);
});
