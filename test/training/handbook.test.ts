// The handbook simulator, re-implemented from its published description: reproducible, with the
// three fraud scenarios as described, and at full scale the published size and fraud rate.

import t from 'tap';
import { handbookCsv, simulateHandbook } from '../../src/training/handbook.ts';

const small = { customers: 600, terminals: 1200, days: 60 };

t.test('reproducible for a seed', async (t) => {
  const a = handbookCsv(simulateHandbook({ ...small, seed: 3 }));
  t.equal(handbookCsv(simulateHandbook({ ...small, seed: 3 })), a);
  t.not(handbookCsv(simulateHandbook({ ...small, seed: 4 })), a);
});

t.test('the three scenarios behave as described', async (t) => {
  const rows = simulateHandbook({ ...small, seed: 5 });
  t.ok(
    rows.filter((r) => r.scenario === 0).every((r) => r.amount <= 220 && r.label === 0),
    'legitimate rows are at most 220',
  );
  t.ok(
    rows.filter((r) => r.scenario === 1).every((r) => r.amount > 220),
    'scenario 1: amounts above 220',
  );
  // Scenario 2: on a compromised terminal's fraud days, all of its transactions are fraud.
  const s2 = rows.filter((r) => r.scenario === 2);
  t.ok(s2.length > 0, 'scenario 2 present');
  const [first] = s2;
  const sameDay = rows.filter((r) => r.terminal_id === first!.terminal_id && r.day === first!.day);
  t.ok(
    sameDay.every((r) => r.label === 1),
    'every transaction of a compromised terminal that day is fraud',
  );
  // Scenario 3: amounts multiplied by 5 on a subset of a customer's transactions.
  t.ok(
    rows.some((r) => r.scenario === 3),
    'scenario 3 present',
  );
  let ordered = true;
  for (let i = 1; i < rows.length; i++) if (rows[i]!.time < rows[i - 1]!.time) ordered = false;
  t.ok(ordered, 'time-ordered');
});

t.test('at full scale: the published size and fraud rate', async (t) => {
  const rows = simulateHandbook();
  const rate = rows.filter((r) => r.label === 1).length / rows.length;
  t.ok(Math.abs(rows.length - 1_750_000) < 50_000, `${rows.length} transactions (published ≈ 1.75 M)`);
  t.ok(Math.abs(rate - 0.0084) < 0.0008, `${(100 * rate).toFixed(3)} % fraud (published ≈ 0.84 %)`);
});
