// Scoring a whole dataset file: its rows (kept at validation, else parsed: job-rows.ts) in time
// order (by `timestamp`, else row order, one second apart), replayed through a history of their
// own, each row taken through the scoring pipeline's steps (scoring/pipeline.ts, ScoringPipeline)
// that a single score takes, so a row is answered as the same transaction sent alone would be:
// its priors and features from its strictly older rows, then the model on the boosters' raw
// scores. The boosters and their exact SHAP values run in batches through the addon (one boundary
// crossing per batch and channel), and one JSON line per row goes to the result file and one to
// the download, in file order. The lines, with each row's reasons, are made by the addon next to
// the SHAP values (lines.rs), since making them in JavaScript is slow. Progress is reported by
// the work itself, per stage. When the file has labels, the result carries the metrics on that
// file. Runs inside a Piscina worker (score-worker.ts); pure enough to test directly.

import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { allocateFeatures } from '../domain/features/extract.ts';
import { History } from '../domain/history/history.ts';
import type { ModelBundle, ModeName } from '../model/bundle-types.ts';
import { BANDS, bandOf, DECISIONS, decisionOf } from '../model/combine.ts';
import { reasonSetup } from '../scoring/explain.ts';
import { ScoringPipeline } from '../scoring/pipeline.ts';
import { resultLines, type LineSetup } from '../addon/addon.ts';
import { averagePrecision, brier, expectedCalibrationError, rocAuc } from '../model/metrics.ts';
import type { ColumnMapping } from '../datasets/csv.ts';
import { jobRows, type JobRows } from './job-rows.ts';
import { CHANNELS } from '../domain/channels.ts';
import { FeatureSpill } from './feature-spill.ts';
import { DRIFT_SAMPLE, DriftCounter } from '../model/drift.ts';
import type { BatchSummary } from '../contract/jobs.ts';

export interface BatchOptions {
  path: string;
  mapping: ColumnMapping;
  mode: ModeName;
  resultPath: string;
  /** Expected rows (from validation), for progress while parsing. */
  expectedRows: number;
  progress: (stage: 'parsing' | 'features' | 'scoring' | 'writing', fraction: number) => void;
  /** Rows per native batch. */
  batchSize?: number;
  /** Reasons per result row, and so reason columns in the download (3 unless given). */
  reasons?: number;
}

/** Reasons per result row unless the job says otherwise. */
const TOP_REASONS = 3;
/** Result bytes a stream may hold before the scoring loop waits for the disk (per stream). */
const WRITE_BUFFER_BYTES = 4 << 20;

export async function scoreDataset(bundle: ModelBundle, o: BatchOptions): Promise<BatchSummary> {
  const stageMs: Record<string, number> = {};
  let mark = performance.now();
  const done = (name: string) => {
    const t = performance.now();
    stageMs[name] = Math.round(t - mark);
    mark = t;
  };

  // The rows: read back from what validation kept (columns.ts) or parsed from the file; streamed
  // from disk on both passes when the file is in time order, else held as columns (job-rows.ts).
  o.progress('parsing', 0);
  const rows = await jobRows(o.path, o.mapping, o.expectedRows, (f) => o.progress('parsing', f));
  const n = rows.length;
  o.progress('parsing', 1);
  done('parsing');

  // Features, replaying the file through a history of its own, a chunk at a time in time order;
  // each chunk goes to the feature file at its rows' file positions (feature-spill.ts).
  o.progress('features', 0);
  const history = new History(bundle.file.training.label_delay_ms);
  const pipeline = new ScoringPipeline(bundle);
  const widths = bundle.channels.map((c) => c.features.length);
  const batch = o.batchSize ?? 2048;
  const chunk = allocateFeatures(batch);
  const replayMatrices = bundle.channels.map((c) => chunk[c.name]);
  const cold = new Uint8Array(n);
  const spill = new FeatureSpill(`${o.resultPath}.features`, n, widths);
  const drift = bundle.reference ? new DriftCounter(bundle.reference) : undefined;
  // Drift counts every `stride`-th row by file position: at most DRIFT_SAMPLE of them.
  const stride = Math.max(1, Math.ceil(n / DRIFT_SAMPLE));
  try {
    let replayed = 0;
    for (const part of rows.replay(batch)) {
      for (let r = 0; r < part.count; r++) {
        const tx = part.at(r);
        cold[part.positions[r]!] = pipeline.cold(pipeline.priors(tx, history)) ? 1 : 0;
        pipeline.features(tx, history, chunk, r);
        if (drift && part.positions[r]! % stride === 0) drift.addRow(replayMatrices, r, tx.payment_type, tx.location);
        history.add(tx);
      }
      spill.write(replayMatrices, part.positions, part.count);
      if (Math.floor((replayed + part.count) / 10_000) > Math.floor(replayed / 10_000)) o.progress('features', (replayed + part.count) / n);
      replayed += part.count;
    }
    o.progress('features', 1);
    done('features');
    const matrices = bundle.channels.map((c) => new Float64Array(batch * c.features.length));
    return await scoreAndWrite(pipeline, o, { rows, spill, matrices, widths, cold, batch, stageMs, mark, drift, stride });
  } finally {
    spill.remove();
    rows.close();
  }
}

/**
 * Buffers for a batch's lines, taken back once their stream has written them, so each batch is
 * made in memory already paged in. Fresh buffers for every batch would have the kernel zeroing new
 * pages for longer than the addon takes to make the lines.
 */
class BufferPool {
  private size: number;

  private readonly free: Buffer[] = [];

  constructor(size: number) {
    this.size = size;
  }

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  /** A buffer of at least `bytes` in place of `small`; later ones are made that large too. */
  grow(small: Buffer, bytes: number): Buffer {
    if (bytes <= small.length) return small;
    this.size = Math.ceil(bytes * 1.25);
    this.free.length = 0;
    return Buffer.allocUnsafeSlow(this.size);
  }

  give(buffer: Buffer): void {
    if (buffer.length >= this.size) this.free.push(buffer);
  }
}

/** What the native result lines need from the model and the file: each channel's features and
 *  weight as reasons see them (explain.ts, as for single requests), the download's score columns,
 *  the file's customer and merchant ids by the index the parsed columns use, and how many reasons
 *  a row keeps (`top`, which the download's header follows). */
export function lineSetup(bundle: ModelBundle, entities: readonly string[], top = TOP_REASONS): LineSetup {
  return {
    reasons: reasonSetup(bundle.channels.map((c) => ({ weight: bundle.file.stack.weights[c.name], features: c.features }))),
    channels: bundle.channels.map((c) => c.name),
    csvChannels: [...CHANNELS],
    bands: [...BANDS],
    decisions: [...DECISIONS],
    paths: ['MODEL', 'COLD_START'],
    entities: [...entities],
    top,
  };
}

/** The model step (the pipeline's, on the boosters' raw scores of a batch) and writing, batch by
 *  batch, in file order, from the feature file. */
async function scoreAndWrite(
  pipeline: ScoringPipeline,
  o: BatchOptions,
  {
    rows,
    spill,
    matrices,
    widths,
    cold,
    batch,
    stageMs,
    mark,
    drift,
    stride,
  }: {
    rows: JobRows;
    spill: FeatureSpill;
    matrices: Float64Array[];
    widths: number[];
    cold: Uint8Array;
    batch: number;
    stageMs: Record<string, number>;
    mark: number;
    drift: DriftCounter | undefined;
    stride: number;
  },
): Promise<BatchSummary> {
  const { bundle } = pipeline;
  const n = rows.length;
  const lines = resultLines(lineSetup(bundle, rows.entityNames, o.reasons ?? TOP_REASONS));
  // Each stream buffers up to WRITE_BUFFER_BYTES before the loop waits for it to drain: a batch's
  // lines are written by the thread pool while the next batch is scored, instead of the loop
  // stopping after every batch.
  const out = createWriteStream(o.resultPath, { flags: 'wx', highWaterMark: WRITE_BUFFER_BYTES });
  // The download, written once here so that serving it is a plain file stream; its header is the
  // writer's own, so it has the columns the lines have.
  const csvOut = createWriteStream(`${o.resultPath}.csv`, { flags: 'w', highWaterMark: WRITE_BUFFER_BYTES });
  csvOut.write(lines.csvHeader);
  // The result's index (results.ts): where each line starts, then the file's length, written a
  // batch at a time as the lines are made, so that no second pass reads the result back.
  const indexOut = createWriteStream(`${o.resultPath}.idx`, { flags: 'wx' });
  // A stream's error (a full disk; or a write still in flight when a failure closed the stream)
  // fails the job; unheard, it would be thrown in the worker thread and end it.
  let streamError: Error | undefined;
  for (const stream of [out, csvOut, indexOut]) stream.on('error', (e) => void (streamError ??= e));
  const lineStarts = new Float64Array(batch);
  let resultBytes = 0;
  const summary: BatchSummary = {
    rows: n,
    decisions: { approve: 0, review: 0, block: 0 },
    bands: { low: 0, medium: 0, high: 0, critical: 0 },
    cold_start_rows: 0,
    stage_ms: stageMs,
    drift: null,
    metrics: null,
  };
  const risks = new Float64Array(n);
  // Labels for the metrics, gathered as the rows go by (they count only when every row has one).
  const labels = new Uint8Array(n);
  let labelled = 0;
  const rawRow = new Array<number>(bundle.channels.length);
  // Per row of a batch: the risk, then each channel's score; band, decision and path codes.
  const width = 1 + bundle.channels.length;
  const scores = new Float64Array(batch * width);
  const codes = new Uint8Array(batch * 3);
  const combined = new Float64Array(1 + 2 * bundle.channels.length);
  const jsonBuffers = new BufferPool(batch * 1024);
  const csvBuffers = new BufferPool(batch * 512);
  let writing = 0;
  try {
    for (let start = 0; start < n; start += batch) {
      const end = Math.min(n, start + batch);
      const count = end - start;
      spill.read(start, count, matrices);
      const raw = bundle.channels.map((c, ch) => c.engine.predictRawBatch(matrices[ch]!.subarray(0, count * widths[ch]!)));
      const phi = bundle.channels.map((c, ch) => c.engine.shapBatch(matrices[ch]!.subarray(0, count * widths[ch]!)));
      const t0 = performance.now();
      for (let j = 0; j < count; j++) {
        const i = start + j;
        for (let k = 0; k < raw.length; k++) rawRow[k] = raw[k]![j]!;
        const coldRow = cold[i] === 1;
        const decisionAndBand = pipeline.model(rawRow, coldRow, o.mode, combined, 0);
        risks[i] = combined[0]!;
        if (drift && i % stride === 0) drift.addScore(risks[i]!, decisionOf(decisionAndBand) !== 'approve');
        summary.decisions[decisionOf(decisionAndBand)]++;
        summary.bands[bandOf(decisionAndBand)]++;
        if (coldRow) summary.cold_start_rows++;
        for (let k = 0; k < width; k++) scores[j * width + k] = combined[k]!;
        codes[j * 3] = decisionAndBand & 3;
        codes[j * 3 + 1] = decisionAndBand >> 2;
        codes[j * 3 + 2] = coldRow ? 1 : 0;
      }
      // The batch's lines, with their reasons, made natively from its SHAP values (lines.rs).
      const cols = rows.columns(start, end);
      for (let j = 0; j < count; j++) {
        const label = cols.labels[j]!;
        if (label === 0 || label === 1) {
          labels[start + j] = label;
          labelled++;
        }
      }
      let json = jsonBuffers.take();
      let csv = csvBuffers.take();
      const [jsonBytes, csvBytes] = lines.write(
        start + 1,
        count,
        matrices,
        phi,
        scores,
        codes,
        cols.amounts,
        cols.labels,
        cols.customers,
        cols.merchants,
        cols.idBytes,
        cols.idOffsets,
        resultBytes,
        lineStarts,
        json,
        csv,
      );
      if (jsonBytes > json.length || csvBytes > csv.length) {
        json = jsonBuffers.grow(json, jsonBytes);
        csv = csvBuffers.grow(csv, csvBytes);
        lines.copyInto(json, csv);
      }
      resultBytes += jsonBytes;
      const [jsonDone, csvDone] = [json, csv];
      out.write(json.subarray(0, jsonBytes), () => jsonBuffers.give(jsonDone));
      csvOut.write(csv.subarray(0, csvBytes), () => csvBuffers.give(csvDone));
      // A copy: the stream may still hold it while the next batch fills `lineStarts`.
      indexOut.write(new Uint8Array(lineStarts.slice(0, count).buffer));
      // Let the event loop run once per batch: a finished write's callback hands the stream its
      // next chunk, so the disk works while the next batch is scored. Without it the loop would not
      // yield until a stream was full, and would then wait for every write it had queued
      // (bench/README.md, bench:batch).
      await new Promise(setImmediate);
      // Wait for each stream only while it still needs to drain (a 'drain' that already happened
      // while waiting for the other would never come again).
      if (out.writableNeedDrain) await once(out, 'drain');
      if (csvOut.writableNeedDrain) await once(csvOut, 'drain');
      if (streamError) throw streamError;
      writing += performance.now() - t0;
      o.progress('scoring', end / n);
    }
    indexOut.write(new Uint8Array(Float64Array.of(resultBytes).buffer));
    out.end();
    csvOut.end();
    indexOut.end();
    await Promise.all([once(out, 'finish'), once(csvOut, 'finish'), once(indexOut, 'finish')]);
  } catch (e) {
    // A failed job leaves no open files behind in its worker thread (the runner removes the
    // partial files before the next attempt).
    for (const s of [out, csvOut, indexOut]) s.destroy();
    throw e;
  }
  stageMs.scoring = Math.round(performance.now() - mark - writing);
  stageMs.writing = Math.round(writing);
  o.progress('writing', 1);

  const metricsFrom = performance.now();
  if (labelled === n && n > 0) {
    const t = bundle.file.thresholds[o.mode];
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (let i = 0; i < n; i++) {
      const flagged = risks[i]! >= t.review;
      if (flagged && labels[i] === 1) tp++;
      else if (flagged) fp++;
      else if (labels[i] === 1) fn++;
    }
    const frauds = labels.reduce((a, b) => a + b, 0);
    summary.metrics = {
      rows: n,
      fraud_rate: frauds / n,
      roc_auc: rocAuc(risks, labels),
      average_precision: averagePrecision(risks, labels),
      brier: brier(risks, labels),
      expected_calibration_error: expectedCalibrationError(risks, labels),
      precision: tp + fp > 0 ? tp / (tp + fp) : 0,
      recall: tp + fn > 0 ? tp / (tp + fn) : 0,
    };
  }
  if (summary.metrics) stageMs.metrics = Math.round(performance.now() - metricsFrom);
  // A labelled file's outcomes decide its verdict (every row, not the sample).
  const review = bundle.file.thresholds[o.mode].review;
  summary.drift = drift?.report(summary.metrics ? { scores: risks, labels, flagged: (i) => risks[i]! >= review, figures: summary.metrics } : undefined) ?? null;
  return summary;
}
