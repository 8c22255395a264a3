// A command's options, for every `npm run` command line (simulate, train, eval:handbook,
// model:create, the benchmarks): each command declares its options once, with one line of
// description each, and gets from that its usage text, `--help`, and its values, typed and checked
// before the command does any work. A mistake on the command line (an unknown option, a missing
// value, a stray argument, a value that does not parse, a file that is not there) is the user's,
// not the program's: it is told in one line naming the problem, followed by the usage, with exit
// status 2, never as a stack trace minutes into a run. Built on node:util's parseArgs, whose tokens
// give every option as written; the checks and messages are ours so that they read the same in
// every command.

import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';

/** What is wrong with an option's value, worded to follow the option's name: `--seeds` + `must be…`. */
export class UsageError extends Error {}

/** One option: `--NAME` for a flag, `--NAME VALUE` otherwise. */
export interface Option<T> {
  /** The value's placeholder in the usage (`N`, `FILE.csv`); none for a flag (present or not). */
  readonly value?: string;
  /** One line: what the option does, and its default. */
  readonly description: string;
  /** Must be given (shown on the usage line itself). */
  readonly required?: boolean;
  /** The value when the option is not given. */
  readonly absent: T;
  /** The value from the text given, or a UsageError saying what is wrong with it. */
  readonly parse: (raw: string) => T;
}

export type Options = Record<string, Option<unknown>>;

/** The values of a command's options, by name, each of its option's type. */
export type Values<O extends Options> = { -readonly [K in keyof O]: O[K] extends Option<infer T> ? T : never };

export interface Command<O extends Options> {
  /** The npm script, as in `npm run NAME`. */
  readonly name: string;
  /** One line on what the command does, printed under the usage line. */
  readonly about?: string;
  readonly options: O;
  /** Lines after the options: environment variables, an example. */
  readonly notes?: readonly string[];
  /** A problem with the options taken together (each alone has been checked), or undefined. */
  readonly check?: (values: Values<O>) => string | undefined;
}

/** `--NAME`: true when given. */
export function flag(description: string): Option<boolean> {
  return { description, absent: false, parse: () => true };
}

/** `--NAME VALUE`, any text; undefined when absent unless a default is given. */
export function text<D extends string | undefined = undefined>(value: string, description: string, options: { default?: D } = {}): Option<string | D> {
  return { value, description, absent: options.default as D, parse: (raw) => raw };
}

/** The same option, which must be given. */
export function required<T>(option: Option<T>): Option<Exclude<T, undefined>> {
  return { ...option, required: true, absent: undefined as never } as Option<Exclude<T, undefined>>;
}

/** `--NAME N`: a whole number (digits only) from `min` (default 0) up to `max`. */
export function wholeNumber<D extends number | undefined = undefined>(
  description: string,
  options: { min?: number; max?: number; default?: D; value?: string } = {},
): Option<number | D> {
  const min = options.min ?? 0;
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  const range = options.max === undefined ? `≥ ${min}` : `from ${min} to ${max}`;
  return {
    value: options.value ?? 'N',
    description,
    absent: options.default as D,
    parse: (raw) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n < min || n > max) throw new UsageError(`must be a whole number ${range}, got ${JSON.stringify(raw)}`);
      return n;
    },
  };
}

/** `--NAME CHOICE`: one of a few words. */
export function oneOf<const C extends readonly string[], D extends C[number] | undefined = undefined>(
  choices: C,
  description: string,
  options: { default?: D; value?: string } = {},
): Option<C[number] | D> {
  const listed = choices.length === 1 ? choices[0]! : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
  return {
    value: options.value ?? choices.join('|'),
    description,
    absent: options.default as D,
    parse: (raw) => {
      if (!choices.includes(raw)) throw new UsageError(`must be ${listed}, got ${JSON.stringify(raw)}`);
      return raw as C[number];
    },
  };
}

/** `--NAME FILE`: a file that exists (read later, so that a typo fails now, not after the work). */
export function existingFile(value: string, description: string): Option<string | undefined> {
  return {
    value,
    description,
    absent: undefined,
    parse: (raw) => {
      const stat = statSync(raw, { throwIfNoEntry: false });
      if (!stat) throw new UsageError(`${raw}: no such file`);
      if (!stat.isFile()) throw new UsageError(`${raw}: not a file`);
      return raw;
    },
  };
}

/** `--NAME FILE`: a file to write, in a folder that exists (so that the work is not lost at the end). */
export function outputFile(value: string, description: string): Option<string | undefined> {
  return {
    value,
    description,
    absent: undefined,
    parse: (raw) => {
      if (statSync(raw, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`${raw}: a folder, not a file`);
      if (!statSync(dirname(raw), { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`${raw}: no folder ${dirname(raw)}`);
      return raw;
    },
  };
}

/** The usage: `usage: npm run NAME -- [options]`, the command's line, one line per option, notes. */
export function usage<O extends Options>(command: Command<O>): string {
  const entries = Object.entries(command.options);
  const requiredPart = entries
    .filter(([, o]) => o.required)
    .map(([name, o]) => `--${name} ${o.value} `)
    .join('');
  const lines = entries.map(([name, o]) => [o.value === undefined ? `--${name}` : `--${name} ${o.value}`, o.description] as const);
  lines.push(['--help, -h', 'this text']);
  const width = Math.max(...lines.map(([left]) => left.length)) + 2;
  return [
    `usage: npm run ${command.name} -- ${requiredPart}[options]`,
    ...(command.about ? [command.about] : []),
    ...lines.map(([left, description]) => `  ${left.padEnd(width)}${description}`),
    ...(command.notes ?? []),
  ].join('\n');
}

export type Parsed<O extends Options> = { help: true } | { help: false; error: string } | { help: false; error?: undefined; values: Values<O> };

/** Reads `args` against the command's options, without printing or exiting: `--help` (which wins
 *  over any mistake), the first problem in one line, or the values. */
export function parseCommandLine<O extends Options>(command: Command<O>, args: readonly string[]): Parsed<O> {
  if ('help' in command.options) throw new Error(`${command.name}: --help is every command's own`);
  const config = Object.fromEntries(
    Object.entries(command.options).map(([name, o]) => [name, { type: o.value === undefined ? ('boolean' as const) : ('string' as const) }]),
  );
  const { tokens } = parseArgs({
    args: [...args],
    options: { ...config, help: { type: 'boolean', short: 'h' } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  if (tokens.some((t) => t.kind === 'option' && t.name === 'help')) return { help: true };
  // One line, whatever the parts of the message hold (a JSON parser's message may quote a newline).
  const fail = (error: string) => ({ help: false as const, error: error.replace(/\s*\n\s*/g, ' ') });
  const given = new Map<string, unknown>();
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') return fail(`unexpected argument ${JSON.stringify(token.value)} (options start with --)`);
    const option = Object.hasOwn(command.options, token.name) ? command.options[token.name]! : undefined;
    if (option === undefined) return fail(`unknown option ${token.rawName}`);
    const name = `--${token.name}`;
    if (given.has(token.name)) return fail(`${name} given twice`);
    if (option.value === undefined) {
      if (token.value !== undefined) return fail(`${name} takes no value`);
      given.set(token.name, true);
      continue;
    }
    // parseArgs takes the next argument as the value whatever it is: `--seed --quick` forgot the seed.
    if (token.value === undefined || (!token.inlineValue && /^(--|-h$)/.test(token.value))) return fail(`${name} needs a value (${option.value})`);
    try {
      given.set(token.name, option.parse(token.value));
    } catch (e) {
      if (e instanceof UsageError) return fail(`${name} ${e.message}`);
      throw e;
    }
  }
  const values: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(command.options)) {
    if (!given.has(name) && option.required) return fail(`--${name} ${option.value} is required`);
    values[name] = given.has(name) ? given.get(name) : option.absent;
  }
  const problem = command.check?.(values as Values<O>);
  if (problem !== undefined) return fail(problem);
  return { help: false, values: values as Values<O> };
}

/** Prints one line naming the problem, then the usage, on standard error; exits 2. */
export function usageError<O extends Options>(command: Command<O>, message: string): never {
  process.stderr.write(`npm run ${command.name}: ${message}\n${usage(command)}\n`);
  process.exit(2);
}

/** The command's values from its arguments (the process's own by default). `--help` prints the
 *  usage and exits 0; a mistake is a usageError (exit 2). Call it before any work. */
export function commandLine<O extends Options>(command: Command<O>, args: readonly string[] = process.argv.slice(2)): Values<O> {
  const parsed = parseCommandLine(command, args);
  if (parsed.help) {
    process.stdout.write(`${usage(command)}\n`);
    process.exit(0);
  }
  if (parsed.error !== undefined) usageError(command, parsed.error);
  return parsed.values;
}
