// bench:rules, in-process part: what the rules stage adds to a recorded score. The real Scorer
// (`scoreToRecord`, explanations on, as the v1 route calls it) scores the same requests against the
// built-in example history (the public sandbox's: 255,552 transactions, its rings), with a context
// that carries an organization's Policy of 20 and of 100 active rules (bench/rule-set.ts, the
// 100,000-value block list included) and with the same context without rules. Samples of the three
// alternate, each a batch of requests; the cost the rules add is the median of each sample's
// difference from the sample without rules beside it. The `rules` stage's own timing (what the
// answer reports) is collected as a cross-check. A tenth of the requests come from customers the
// history does not have (see below).

import { BUILT_IN_LANGUAGE, checkExpression } from '../src/domain/rules/expression.ts';
import { Policy } from '../src/live/policy.ts';
import { Sandbox } from '../src/app/sandbox.ts';
import { loadModelFolder } from '../src/model/bundle.ts';
import { isProblem, type ModeName } from '../src/model/bundle-types.ts';
import { Scorer, type ScoreContext } from '../src/scoring/scorer.ts';
import type { ScoreInput } from '../src/contract/score.ts';
import { root } from './server-process.ts';
import { BLOCK_LIST, benchRules, blockListValues, type BenchRule } from './rule-set.ts';
import { scoreRequests } from './requests.ts';

const LIST_ID = 'list_blocked';

/** A Policy holding `rules` (each checked as the API checks it) and the block list. */
export function benchPolicy(rules: readonly BenchRule[], listValues: readonly string[]): Policy {
  const policy = new Policy((id, e) => {
    throw new Error(`rule ${id} does not compile: ${(e as Error).message}`);
  });
  listValues.forEach((value, k) => {
    policy.applyStay({ id: k + 1, list_id: LIST_ID, value, added_at_ms: 0, expires_at_ms: null, removed_at_ms: null });
  });
  rules.forEach((r, k) => {
    const checked = checkExpression(r.expression, BUILT_IN_LANGUAGE, new Set([BLOCK_LIST]));
    if (!checked.checked) throw new Error(`${r.name}: ${checked.problems[0]!.message}`);
    policy.setRule({
      id: `rule_${k}`,
      name: r.name,
      status: 'active',
      deleted: false,
      live_version: 1,
      expression: r.expression,
      action: r.action,
      lists: checked.checked.lists.length ? { [BLOCK_LIST]: LIST_ID } : {},
    });
  });
  return policy;
}

export interface ScorerFigures {
  requests_per_sample: number;
  samples: number;
  no_rules_us: number;
  rules_20_us: number;
  rules_100_us: number;
  added_20_us: number;
  added_100_us: number;
  ratio_20: number;
  ratio_100: number;
  stage_20_us: number;
  stage_100_us: number;
  matched_share_20: number;
  changed_share_20: number;
  errors_per_request_20: number;
}

const median = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/** The built-in model scoring against the example history: what both the scorer's figures and the
 *  backtest's logged decisions are made with. */
export interface ExampleScoring {
  scorer: Scorer;
  /** The example history and its rings, scored as of one second after its newest transaction. */
  base: ScoreContext;
  /** 2,000 requests (see below). */
  inputs: ScoreInput[];
  /** The block list's values. */
  listValues: string[];
}

export async function exampleScoring(): Promise<ExampleScoring> {
  const bundle = loadModelFolder(`${root}models/builtin`);
  if (isProblem(bundle)) throw new Error(bundle.message);
  const sandbox = new Sandbox(bundle.file.training.label_delay_ms);
  const built = await sandbox.built();
  // The requests bench:http sends, as the v1 route hands them to the scorer; one in ten from a
  // customer the history does not have, whose behavioural features are missing, so rules that read
  // them cannot be evaluated (an error, not a match), as on a live organization's new customers.
  const { newTransaction } = scoreRequests();
  const inputs: ScoreInput[] = Array.from({ length: 2000 }, (_, k) => {
    const input = { mode: 'balanced' as ModeName, ...(JSON.parse(newTransaction()) as Omit<ScoreInput, 'mode'>) };
    return k % 10 === 9 ? { ...input, customer_id: `N${String(k).padStart(6, '0')}` } : input;
  });
  return {
    scorer: new Scorer({ bundle }),
    base: { history: built.history, rings: built.ringIndex, at: sandbox.asOf },
    inputs,
    listValues: blockListValues(),
  };
}

/** Times the three contexts alternately. */
export async function measureScorer(o: { quick: boolean; log: (line: string) => void; example: ExampleScoring }): Promise<ScorerFigures> {
  const { scorer, base, inputs, listValues } = o.example;
  const with20: ScoreContext = { ...base, rules: benchPolicy(benchRules(20), listValues) };
  const with100: ScoreContext = { ...base, rules: benchPolicy(benchRules(100), listValues) };

  // What the rules do to these requests (and that they run without errors).
  let matched = 0;
  let changed = 0;
  let errors = 0;
  for (const input of inputs) {
    const s = scorer.scoreToRecord(input, with20);
    if (s.rules!.matches.length) matched++;
    if (s.rules!.decision !== s.modelDecision) changed++;
    errors += s.rules!.errors.length;
  }

  const PER_SAMPLE = 500;
  const SAMPLES = o.quick ? 21 : 61;
  const contexts = [base, with20, with100];
  const times: number[][] = [[], [], []];
  const stage: number[][] = [[], [], []];
  let next = 0;
  const sample = (k: number, keep: boolean) => {
    const context = contexts[k]!;
    const from = next;
    const t0 = performance.now();
    for (let i = 0; i < PER_SAMPLE; i++) {
      const s = scorer.scoreToRecord(inputs[(from + i) % inputs.length]!, context);
      if (keep && k > 0) stage[k]!.push(s.result.stages.find((x) => x.name === 'rules')!.ms);
    }
    const us = ((performance.now() - t0) * 1000) / PER_SAMPLE;
    if (keep) times[k]!.push(us);
  };
  // Warm-up: every context's code paths compiled before anything counts.
  for (let w = 0; w < 6; w++) for (let k = 0; k < 3; k++) sample(k, false);
  for (let i = 0; i < SAMPLES; i++) {
    // Each sample scores the same requests in every context; the order rotates.
    for (let j = 0; j < 3; j++) sample((i + j) % 3, true);
    next = (next + PER_SAMPLE) % inputs.length;
  }
  const diff = (k: number) => median(times[k]!.map((t, i) => t - times[0]![i]!));
  const figures: ScorerFigures = {
    requests_per_sample: PER_SAMPLE,
    samples: SAMPLES,
    no_rules_us: round(median(times[0]!)),
    rules_20_us: round(median(times[1]!)),
    rules_100_us: round(median(times[2]!)),
    added_20_us: round(diff(1)),
    added_100_us: round(diff(2)),
    ratio_20: round(median(times[1]!) / median(times[0]!), 3),
    ratio_100: round(median(times[2]!) / median(times[0]!), 3),
    stage_20_us: round(median(stage[1]!) * 1000),
    stage_100_us: round(median(stage[2]!) * 1000),
    matched_share_20: round(matched / inputs.length, 3),
    changed_share_20: round(changed / inputs.length, 3),
    errors_per_request_20: round(errors / inputs.length, 3),
  };
  o.log(
    `scoreToRecord, explanations on (${SAMPLES} samples of ${PER_SAMPLE} requests, medians): no rules ${figures.no_rules_us} µs, 20 rules ${figures.rules_20_us} µs (+${figures.added_20_us}), 100 rules ${figures.rules_100_us} µs (+${figures.added_100_us})`,
  );
  o.log(`the answer's rules stage: ${figures.stage_20_us} µs with 20 rules, ${figures.stage_100_us} µs with 100`);
  o.log(
    `with 20 rules: ${((matched / inputs.length) * 100).toFixed(1)} % of requests match a rule, ${((changed / inputs.length) * 100).toFixed(1)} % change decision, ${figures.errors_per_request_20} errors a request`,
  );
  return figures;
}
