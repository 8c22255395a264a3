// The Models page's third section per organization (pages/models.ts draws it after the challengers'
// report and the model history): "Train from {organization}'s data". A model of the organization's
// own is made from the payments scored with its API keys and the history it imported, with the
// outcomes known now, on the server's command line (`npm run train -- --organization`, docs/model.md
// "Challengers"); the dashboard cannot train. What it can do is ask the service whether that
// command would have enough to learn from: an owner checks a recalibration or boosters of its own
// (POST /api/training/jobs without a dataset, which runs the command's checks and, when all pass,
// answers 501 with what it would train on and the command), and the answer is shown here, in the
// section, since a check changes nothing and the rest of the page stays as it is: the transactions
// it would count and their span, the parts of the time split, and the command to copy; or the
// service's message and fix (not enough data, not an owner, the daily quota).

import { ApiError, apiAnswer } from '../api.ts';
import type { Organization, OrganizationTrainingPlan } from '../contract.ts';
import { errorBox, h, table, utc } from '../dom.ts';
import { idKey } from './challengers.ts';

type Kind = OrganizationTrainingPlan['kind'];

/** Each kind of model in words: its button, its id, and what a check is about. */
const KINDS: Record<Kind, { button: string; id: string; name: string; what: string; recalibrate: boolean }> = {
  recalibrated: { button: 'Check a recalibration', id: 'recalibrate', name: 'A recalibration', what: 'a recalibration', recalibrate: true },
  own_boosters: { button: 'Check boosters of its own', id: 'own', name: 'Boosters of its own', what: 'boosters of its own', recalibrate: false },
};

const count = (n: number) => n.toLocaleString('en');

export function trainingSection(org: Organization): HTMLElement {
  const key = `training-${idKey(org.id)}`;
  const status = h('div', { id: `${key}-status`, class: 'model-status', role: 'status', 'aria-live': 'polite' });
  const result = h('div', { id: `${key}-result`, class: 'training-result' });
  const buttons: HTMLButtonElement[] = [];
  const button = (kind: Kind) => {
    const b = h(
      'button',
      { type: 'button', id: `${key}-${KINDS[kind].id}`, class: kind === 'recalibrated' ? undefined : 'secondary', 'aria-describedby': `${key}-note` },
      KINDS[kind].button,
    );
    b.addEventListener('click', async () => {
      for (const other of buttons) other.disabled = true;
      result.setAttribute('aria-busy', 'true');
      status.textContent = `Checking whether ${org.name} has enough data for ${KINDS[kind].what}…`;
      const shown = await check(org, key, kind);
      result.replaceChildren(...shown.body);
      result.removeAttribute('aria-busy');
      status.textContent = shown.said;
      for (const other of buttons) other.disabled = false;
      document.getElementById(`${key}-result-title`)?.focus();
    });
    buttons.push(b);
    return b;
  };
  return h(
    'section',
    { class: 'card training-plan', id: key, 'aria-labelledby': `${key}-title` },
    h('h2', { id: `${key}-title` }, `Train from ${org.name}'s data`),
    h(
      'p',
      { class: 'explain', id: `${key}-about` },
      `A model of ${org.name}'s own, made from the payments scored with its API keys and the history it imported, with the outcomes known now. `,
      'Only transactions older than the label delay count (a fraud not reported by then counts as legitimate); they are split by time, ',
      'the model is fitted on the earlier ones and tested on the latest, which it never saw. ',
      "Training runs on the server's command line, not from the dashboard: here an owner checks whether there is enough to learn from, and gets the command.",
    ),
    h(
      'ul',
      { class: 'explain', id: `${key}-kinds` },
      h(
        'li',
        {},
        h('strong', {}, 'A recalibration'),
        " keeps the built-in model's ranking and refits only its probabilities to the organization's outcomes: ",
        'what fixes scores that rank payments well but say the wrong fraud rate.',
      ),
      h(
        'li',
        {},
        h('strong', {}, 'Boosters of its own'),
        ' add trees to the built-in ones that learn what the built-in model misses here; they need more known frauds.',
      ),
    ),
    org.role === 'owner'
      ? h(
          'div',
          { class: 'actions' },
          button('recalibrated'),
          button('own_boosters'),
          h('span', { class: 'muted', id: `${key}-note` }, 'A check changes nothing: it says what the command would train on, or what is missing.'),
        )
      : h('p', { class: 'muted', id: `${key}-owners` }, `Only an owner of ${org.name} can check this and train a model for it.`),
    status,
    result,
  );
}

/** Asks the service for the plan of `kind`: what to show, and what the status line says. */
async function check(org: Organization, key: string, kind: Kind): Promise<{ body: HTMLElement[]; said: string }> {
  const name = KINDS[kind].name;
  const title = (text: string) => h('h3', { id: `${key}-result-title`, tabindex: '-1' }, `${name}: ${text}`);
  try {
    const answer = await apiAnswer('/api/training/jobs', { method: 'POST', body: { organization_id: org.id, recalibrate: KINDS[kind].recalibrate } });
    // Training through the API is not built: every check passed is a 501, so a success is a
    // service newer than this page.
    return {
      body: [title('answered'), h('p', {}, `The service answered ${answer.status}, with no plan to show. Reload the page.`)],
      said: `The service answered ${answer.status}.`,
    };
  } catch (e) {
    const plan = e instanceof ApiError && e.status === 501 ? (e.detail.would_run as OrganizationTrainingPlan | undefined) : undefined;
    if (plan?.source === 'organization') {
      return {
        body: [title('every check passed'), ...planShown(org, key, plan)],
        said:
          `Every check passed: ${org.name} has enough data for ${KINDS[kind].what}, ` +
          `${count(plan.counts.transactions)} transactions with ${count(plan.counts.frauds)} frauds known. Run the command below to train it.`,
      };
    }
    const missing = e instanceof ApiError && e.reason === 'not_enough_data';
    return {
      body: [title(missing ? 'not enough data yet' : 'not checked'), errorBox(e)],
      said: missing
        ? `${org.name} does not have enough data for ${KINDS[kind].what} yet: what is missing follows.`
        : `${name} could not be checked: the reason follows.`,
    };
  }
}

function planShown(org: Organization, key: string, plan: OrganizationTrainingPlan): HTMLElement[] {
  const t = plan.transactions;
  const c = plan.counts;
  const span = t.first && t.last ? `, from ${utc(t.first)} to ${utc(t.last)}` : '';
  const parts: [string, number | undefined][] = [
    ['Training part: the added trees learn from it', c.train],
    ['Validation part: chooses how many trees to keep', c.validation],
    ['Before the test part: the calibration the test measures is fitted on it', c.calibration],
    ['Test part: never fitted on, it measures the new model against the built-in one', c.test],
    ['Known frauds in the test part', c.test_frauds],
  ];
  const command = h('code', { id: `${key}-command`, class: 'training-command' }, plan.command);
  const copied = h('span', { id: `${key}-copied`, class: 'muted', role: 'status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', class: 'secondary', id: `${key}-copy` }, 'Copy the command');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(plan.command);
      copied.textContent = 'Copied.';
    } catch {
      // No clipboard here (permission refused, or not a secure page): select it, for the keyboard's copy.
      getSelection()?.selectAllChildren(command);
      copied.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy it.';
    }
  });
  return [
    h(
      'p',
      { id: `${key}-data` },
      `As of ${utc(plan.as_of)}, ${count(c.transactions)} transactions older than the label delay count: `,
      `${count(t.scored)} scored through the service and ${count(t.imported)} imported${span}, with ${count(c.frauds)} frauds known.`,
    ),
    h(
      'div',
      { class: 'model-report-part', id: `${key}-parts` },
      h('h4', { id: `${key}-parts-title` }, 'The parts, split by time'),
      table(
        ['Part', 'Transactions'],
        parts.filter(([, n]) => n !== undefined).map(([part, n]) => [part, count(n!)]),
        'Oldest first, the label delay between parts; the test part measures the new model, ' +
          'and the stored model’s calibration is then refitted on every transaction',
      ),
    ),
    h(
      'div',
      { class: 'model-report-part' },
      h('h4', { id: `${key}-command-title` }, 'Train it'),
      h(
        'p',
        { class: 'explain' },
        'Run this where the server runs, with its storage settings (on the embedded database, stop the server first). ',
        `It stores the model as a custom model of ${org.name}: a candidate, which an owner makes a challenger on its card above `,
        'to compare it with the active model on new payments before it decides anything.',
      ),
      h('div', { class: 'actions' }, command, copy),
      copied,
    ),
  ];
}
