// Reading a table a page at a time with the next page asked for before this one is handed over,
// so the database reads it while the caller works on this one (a history's load, a snapshot's
// pieces).

/**
 * Pages in order: `first` is the first page's query; `after(page)` asks for the one after it
 * (undefined: there is none); `each` takes a page, after the next was asked for. A page asked for
 * ahead that fails is thrown when its turn comes, never left unhandled meanwhile.
 */
export async function readAhead<P>(first: Promise<P>, after: (page: P) => Promise<P> | undefined, each: (page: P) => void | Promise<void>): Promise<void> {
  let next: Promise<P> | undefined = first;
  while (next) {
    const page: P = await next;
    next = after(page);
    next?.catch(() => {});
    await each(page);
  }
}
