// The page's address names what is shown (`#/datasets?dataset=…`, `#/datasets?job=…`), so a result
// can be reloaded or linked: each view that replaces the current upload's area updates it here.

/** Shows what is on screen in the address without a navigation (no hashchange, nothing redrawn). */
export function address(q: { dataset?: string; job?: string }): void {
  const query = new URLSearchParams(q as Record<string, string>).toString();
  history.replaceState(null, '', `#/datasets${query ? `?${query}` : ''}`);
}
