// The benchmarks' own timing harness: every measurement runs its baseline in the same process,
// interleaved sample by sample so that drift affects both sides alike, and reports medians.
// `--quick` shortens the sampling, never the work measured per sample. Every benchmark reads its
// command line through benchmarkCommandLine() first thing, so that `--help` and a mistyped option
// are answered before any server starts or any data is made (command-line.ts).

import { commandLine, flag, type Command, type Option, type Options, type Values } from '../src/command-line.ts';

/** `--quick` was given; set by benchmarkCommandLine(), which every benchmark calls first. */
export let quick = false;

/** The benchmark's options (`--quick`, described by `quick`, and its own) from the command line;
 *  `--help` prints them, a mistake exits 2 with the usage. */
export function benchmarkCommandLine<O extends Options = Record<never, never>>(
  command: Omit<Command<O & { quick: Option<boolean> }>, 'options'> & { quick: string; options?: O },
): Values<O & { quick: Option<boolean> }> {
  const { quick: quickDescription, options, ...rest } = command;
  const values = commandLine({ ...rest, options: { ...(options ?? ({} as O)), quick: flag(quickDescription) } });
  quick = (values as { quick: boolean }).quick;
  return values;
}

export interface Timing {
  /** Median nanoseconds per operation. */
  ns: number;
  samples: number[];
}

/** Calls `fn` (which performs `ops` operations) repeatedly; returns ns per operation. */
function sampleOnce(fn: () => void, ops: number): number {
  const t0 = process.hrtime.bigint();
  fn();
  const t1 = process.hrtime.bigint();
  return Number(t1 - t0) / ops;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Times `ours` against `baseline`, alternating samples. Each function performs `ops` operations per
 * call. Returns both timings and `speedup` = baseline / ours.
 */
export function compare(
  name: string,
  ours: () => void,
  oursOps: number,
  baseline: () => void,
  baselineOps: number,
  opts: { samples?: number; warmup?: number } = {},
): { name: string; ours: Timing; baseline: Timing; speedup: number } {
  const samples = opts.samples ?? (quick ? 7 : 21);
  const warmup = opts.warmup ?? 2;
  for (let i = 0; i < warmup; i++) {
    ours();
    baseline();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < samples; i++) {
    a.push(sampleOnce(ours, oursOps));
    b.push(sampleOnce(baseline, baselineOps));
  }
  const result = { name, ours: { ns: median(a), samples: a }, baseline: { ns: median(b), samples: b }, speedup: median(b) / median(a) };
  console.log(`${name.padEnd(34)} ours ${fmt(result.ours.ns).padStart(10)}   baseline ${fmt(result.baseline.ns).padStart(10)}   ${result.speedup.toFixed(2)}x`);
  return result;
}

/** Times a single function; ns per operation. */
export function time(name: string, fn: () => void, ops: number, samples = quick ? 7 : 21): Timing {
  fn();
  const s: number[] = [];
  for (let i = 0; i < samples; i++) s.push(sampleOnce(fn, ops));
  const t = { ns: median(s), samples: s };
  console.log(`${name.padEnd(34)} ${fmt(t.ns).padStart(10)}`);
  return t;
}

export function fmt(ns: number): string {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`;
  return `${ns.toFixed(1)} ns`;
}
