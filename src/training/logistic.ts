// Small logistic regression by Newton's method with a light L2 penalty (not on the intercept):
// fits the stack of channel log-odds and Platt calibration. Deterministic; a handful of inputs.

export interface Logistic {
  bias: number;
  weights: number[];
}

export function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

/** `x` is row-major with `k` columns; `y` holds 0/1 labels. */
export function fitLogistic(x: ArrayLike<number>, k: number, y: ArrayLike<number>, l2 = 1e-3, iterations = 50): Logistic {
  const n = y.length;
  const d = k + 1; // intercept first
  const beta = new Array<number>(d).fill(0);
  for (let it = 0; it < iterations; it++) {
    const grad = new Array<number>(d).fill(0);
    const hess = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (let i = 0; i < n; i++) {
      let z = beta[0]!;
      for (let j = 0; j < k; j++) z += beta[j + 1]! * x[i * k + j]!;
      const p = sigmoid(z);
      const w = Math.max(p * (1 - p), 1e-12);
      const r = p - y[i]!;
      for (let a = 0; a < d; a++) {
        const xa = a === 0 ? 1 : x[i * k + a - 1]!;
        grad[a]! += r * xa;
        for (let b = a; b < d; b++) hess[a]![b]! += w * xa * (b === 0 ? 1 : x[i * k + b - 1]!);
      }
    }
    for (let a = 1; a < d; a++) {
      grad[a]! += l2 * n * beta[a]!;
      hess[a]![a]! += l2 * n;
    }
    for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) hess[a]![b] = hess[b]![a]!;
    const step = solve(hess, grad);
    let change = 0;
    for (let a = 0; a < d; a++) {
      beta[a]! -= step[a]!;
      change = Math.max(change, Math.abs(step[a]!));
    }
    if (change < 1e-10) break;
  }
  return { bias: beta[0]!, weights: beta.slice(1) };
}

/** Gaussian elimination with partial pivoting (small dense systems). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    [m[c], m[p]] = [m[p]!, m[c]!];
    const pivot = m[c]![c]!;
    if (Math.abs(pivot) < 1e-300) continue;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / pivot;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => (Math.abs(row[i]!) < 1e-300 ? 0 : row[n]! / row[i]!));
}
