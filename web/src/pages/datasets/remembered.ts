// This browser's uploads and jobs, by id, in localStorage: a visitor without an organization has no
// list on the service (a guest's uploads belong to whoever holds the id), so the page keeps the ids
// it created to list them again later (history.ts), and drops those the service no longer knows.

/** This browser's uploads and jobs (ids only, newest first), for a visitor without an organization. */
const MINE = 'datasets.mine';
const KEPT_IDS = 30;

export function mine(): { datasets: string[]; jobs: string[] } {
  try {
    const kept = JSON.parse(localStorage.getItem(MINE) ?? '{}');
    return {
      datasets: Array.isArray(kept.datasets) ? kept.datasets.filter((x: unknown) => typeof x === 'string') : [],
      jobs: Array.isArray(kept.jobs) ? kept.jobs.filter((x: unknown) => typeof x === 'string') : [],
    };
  } catch {
    return { datasets: [], jobs: [] };
  }
}

export function remember(kind: 'datasets' | 'jobs', id: string): void {
  const kept = mine();
  kept[kind] = [id, ...kept[kind].filter((x) => x !== id)].slice(0, KEPT_IDS);
  localStorage.setItem(MINE, JSON.stringify(kept));
}

export function forget(kind: 'datasets' | 'jobs', id: string): void {
  const kept = mine();
  kept[kind] = kept[kind].filter((x) => x !== id);
  localStorage.setItem(MINE, JSON.stringify(kept));
}
