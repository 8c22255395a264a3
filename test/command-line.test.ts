// Every `npm run` command line answers `--help` with its options (exit 0), and a mistake (an
// unknown option, a missing or bad value, a stray argument) with one line naming it, then the
// usage, exit 2, and no stack trace: first the shared module (src/command-line.ts) on its own, then
// each command as a real process, which must answer before doing any work.

import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  existingFile,
  flag,
  UsageError,
  oneOf,
  outputFile,
  parseCommandLine,
  required,
  text,
  usage,
  wholeNumber,
  type Command,
  type Options,
} from '../src/command-line.ts';
import { tempDir } from './support/temp.ts';

const dir = tempDir('command-line-');
const csv = join(dir, 'data.csv');
writeFileSync(csv, 'x\n');

const example = {
  name: 'example',
  about: 'What it does.',
  options: {
    seed: wholeNumber('the seed (default 7)', { default: 7 }),
    iterations: wholeNumber('trees', { min: 1, max: 100 }),
    data: existingFile('FILE.csv', 'a CSV'),
    out: outputFile('FILE', 'where to write'),
    preset: oneOf(['service', 'handbook'], 'which simulator', { default: 'service' }),
    label: text('TEXT', 'a label'),
    quick: flag('faster'),
  },
  notes: ['A note.'],
  check: (v) => (v.data !== undefined && v.quick ? '--quick reads no --data' : undefined),
} satisfies Command<Options>;

function problem(args: string[], command: Command<Options> = example): string | undefined {
  const r = parseCommandLine(command, args);
  return r.help ? 'help' : r.error;
}

t.test('values: typed, checked, defaults when absent', async (t) => {
  const r = parseCommandLine(example, ['--iterations', '40', '--data', csv, `--out=${join(dir, 'o.csv')}`, '--preset', 'handbook', '--label', 'x y']);
  t.notOk(r.help);
  if (r.help || r.error !== undefined) return t.fail(String(r.help || r.error));
  t.same(r.values, { seed: 7, iterations: 40, data: csv, out: join(dir, 'o.csv'), preset: 'handbook', label: 'x y', quick: false });
  const none = parseCommandLine(example, []);
  t.same(!none.help && none.error === undefined && none.values, {
    seed: 7,
    iterations: undefined,
    data: undefined,
    out: undefined,
    preset: 'service',
    label: undefined,
    quick: false,
  });
  const flagged = parseCommandLine(example, ['--quick', '--seed', '0']);
  t.same(!flagged.help && flagged.error === undefined && [flagged.values.quick, flagged.values.seed], [true, 0]);
});

t.test('each mistake in one line naming it', async (t) => {
  const cases: [string[], string][] = [
    [['--bogus'], 'unknown option --bogus'],
    [['--bogus=3'], 'unknown option --bogus'],
    [['-x'], 'unknown option -x'],
    [['stray'], 'unexpected argument "stray" (options start with --)'],
    [['--', '--seed'], 'unexpected argument "--seed" (options start with --)'],
    [['--seed'], '--seed needs a value (N)'],
    [['--seed', '--quick'], '--seed needs a value (N)'],
    [['--quick=yes'], '--quick takes no value'],
    [['--seed', '1', '--seed', '2'], '--seed given twice'],
    [['--seed', '-1'], '--seed must be a whole number ≥ 0, got "-1"'],
    [['--seed', '1.5'], '--seed must be a whole number ≥ 0, got "1.5"'],
    [['--seed', ''], '--seed must be a whole number ≥ 0, got ""'],
    [['--iterations', '0'], '--iterations must be a whole number from 1 to 100, got "0"'],
    [['--iterations', '101'], '--iterations must be a whole number from 1 to 100, got "101"'],
    [['--iterations', 'many'], '--iterations must be a whole number from 1 to 100, got "many"'],
    [['--data', join(dir, 'missing.csv')], `--data ${join(dir, 'missing.csv')}: no such file`],
    [['--data', dir], `--data ${dir}: not a file`],
    [['--out', dir], `--out ${dir}: a folder, not a file`],
    [['--out', join(dir, 'no', 'x.csv')], `--out ${join(dir, 'no', 'x.csv')}: no folder ${join(dir, 'no')}`],
    [['--preset', 'other'], '--preset must be service or handbook, got "other"'],
    [['--data', csv, '--quick'], '--quick reads no --data'],
  ];
  const lines = {
    name: 'x',
    options: {
      n: {
        value: 'N',
        description: 'n',
        absent: 0,
        parse: () => {
          throw new UsageError('is\n  not\nright');
        },
      },
    },
  } satisfies Command<Options>;
  t.equal(problem(['--n', '1'], lines), '--n is not right', 'a message over several lines is joined into one');
  for (const [args, message] of cases) t.equal(problem(args), message, args.join(' '));
});

t.test('--help wins over any mistake; -h too', async (t) => {
  for (const args of [['--help'], ['-h'], ['--bogus', '--help'], ['--seed', 'x', '-h']]) t.equal(problem(args), 'help', args.join(' '));
});

t.test('required options', async (t) => {
  const command = { name: 'make', options: { organization: required(text('ORG_ID', 'whose')), name: text('NAME', 'what') } } satisfies Command<Options>;
  t.equal(problem([], command), '--organization ORG_ID is required');
  const r = parseCommandLine(command, ['--organization', 'o']);
  t.same(!r.help && r.error === undefined && r.values, { organization: 'o', name: undefined });
  t.match(usage(command), /^usage: npm run make -- --organization ORG_ID \[options\]\n/);
  t.throws(() => parseCommandLine({ name: 'x', options: { help: flag('mine') } }, []), /--help is every command's own/);
});

t.test('the usage: the command line, one line per option, aligned, then the notes', async (t) => {
  t.equal(
    usage(example),
    [
      'usage: npm run example -- [options]',
      'What it does.',
      '  --seed N                   the seed (default 7)',
      '  --iterations N             trees',
      '  --data FILE.csv            a CSV',
      '  --out FILE                 where to write',
      '  --preset service|handbook  which simulator',
      '  --label TEXT               a label',
      '  --quick                    faster',
      '  --help, -h                 this text',
      'A note.',
    ].join('\n'),
  );
});

// --- every command line, as a process ------------------------------------------------------------

interface CommandCase {
  /** The npm script. */
  name: string;
  file: string;
  options: string[];
  /** Bad values: the arguments and the one line expected. */
  bad?: [string[], string | RegExp][];
  /** A command not held to the shared module: the reason its case is skipped. */
  pending?: string;
}

const commands: CommandCase[] = [
  {
    name: 'simulate',
    file: 'tools/simulate.ts',
    options: ['--preset', '--seed', '--customers', '--merchants', '--days', '--out'],
    bad: [
      [['--days', '0'], '--days must be a whole number ≥ 1, got "0"'],
      [['--seed'], '--seed needs a value (N)'],
      [['--preset', 'x'], '--preset must be service or handbook, got "x"'],
      [['--out', join(dir, 'no', 'sim.csv')], `--out ${join(dir, 'no', 'sim.csv')}: no folder ${join(dir, 'no')}`],
    ],
  },
  {
    name: 'train',
    file: 'tools/train.ts',
    options: ['--data', '--out', '--iterations', '--settings', '--seed'],
    bad: [[['--iterations', 'many'], '--iterations must be a whole number ≥ 1, got "many"']],
  },
  {
    name: 'eval:handbook',
    file: 'tools/eval-handbook.ts',
    options: ['--seed', '--seeds', '--data', '--settings', '--iterations', '--resamples', '--quick'],
    bad: [[['--resamples', '1e3'], '--resamples must be a whole number ≥ 1, got "1e3"']],
  },
  {
    name: 'eval:challengers',
    file: 'tools/eval-challengers.ts',
    options: ['--seed', '--seeds', '--trial', '--quick'],
    bad: [
      [['--seeds', '0'], '--seeds must be a whole number ≥ 1, got "0"'],
      [['--trial', 'x'], '--trial must be recalibrate, other_mix or new_pattern, got "x"'],
    ],
  },
  {
    name: 'golden',
    file: 'tools/golden.ts',
    options: ['--model', '--out'],
    bad: [[['--out', join(dir, 'no', 'golden.json')], `--out ${join(dir, 'no', 'golden.json')}: no folder ${join(dir, 'no')}`]],
  },
  {
    name: 'model:create',
    file: 'tools/model-create.ts',
    options: ['--organization', '--name', '--settings'],
    bad: [
      [['--name', 'x'], '--organization ORG_ID is required'],
      [['--organization', 'o', '--name', 'x', '--settings', join(dir, 'none.json')], `--settings ${join(dir, 'none.json')}: no such file`],
      [['--organization', 'o', '--name', 'x', '--settings', csv], new RegExp(`^--settings ${csv}: not JSON \\(.*\\)$`)],
    ],
  },
  { name: 'bench', file: 'bench/run.ts', options: ['--quick'], bad: [[['engine'], 'unexpected argument "engine" (options start with --)']] },
  { name: 'bench:engine', file: 'bench/engine.ts', options: ['--quick'], bad: [[['--quick=1'], '--quick takes no value']] },
  { name: 'bench:http', file: 'bench/http.ts', options: ['--processes', '--quick'], bad: [[['--processes', '3'], '--processes must be 2, got "3"']] },
  { name: 'bench:batch', file: 'bench/batch.ts', options: ['--quick'] },
  { name: 'bench:listing', file: 'bench/listing.ts', options: ['--quick', '--only'] },
  { name: 'bench:cases', file: 'bench/cases.ts', options: ['--quick'] },
  { name: 'bench:start', file: 'bench/start.ts', options: ['--quick'] },
  { name: 'bench:containers', file: 'bench/containers.ts', options: ['--quick'] },
];

function run(file: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // No DATABASE_URL: bench:start must answer --help without one, and nothing may reach a database.
    const env = { ...process.env, DATABASE_URL: '' };
    const child = spawn(process.execPath, [file, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

t.test('package.json runs each command line from its file', async (t) => {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
  for (const c of commands) t.equal(scripts[c.name], `node ${c.file}`, c.name);
});

for (const c of commands) {
  t.test(`npm run ${c.name}`, { skip: c.pending ?? false }, async (t) => {
    // Each mistake is a process of its own (a start that loads the sources): the command's own
    // bad values when it has some, else an unknown option (every message is the shared module's,
    // held in-process above).
    const wrong: [string[], string | RegExp][] = c.bad?.length ? c.bad : [[['--bogus'], 'unknown option --bogus']];
    const [help, ...answers] = await Promise.all([run(c.file, ['--help']), ...wrong.map(([args]) => run(c.file, args))]);

    t.equal(help.status, 0, '--help exits 0');
    const lines = help.stdout.trimEnd().split('\n');
    t.match(lines[0], new RegExp(`^usage: npm run ${c.name} -- `), 'the usage line first');
    for (const option of [...c.options, '--help'])
      t.ok(
        lines.some((l) => l.startsWith(`  ${option}`)),
        `a line for ${option}`,
      );
    t.equal(help.stderr, '', 'nothing on stderr');
    const usageText = help.stdout;

    for (const [i, [args, message]] of wrong.entries()) {
      const r = answers[i]!;
      const what = args.join(' ');
      t.equal(r.status, 2, `${what}: exit 2`);
      const [prefix, first] = [`npm run ${c.name}: `, r.stderr.split('\n')[0]!];
      if (typeof message === 'string') t.equal(first, prefix + message, `${what}: one line naming it`);
      else t.ok(first.startsWith(prefix) && message.test(first.slice(prefix.length)), `${what}: one line naming it (${first})`);
      t.equal(r.stderr.slice(r.stderr.indexOf('\n') + 1), usageText, `${what}: then the usage`);
      t.notMatch(r.stderr, /\n\s+at /, `${what}: no stack trace`);
      t.equal(r.stdout, '', `${what}: nothing on stdout`);
    }
  });
}
