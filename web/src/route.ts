// Where the address points: `#/transactions/T-1?org=…` is the path ['transactions', 'T-1'] and the
// query `org=…`. Pages get it so that what they show (a filter, a page, a record) is in the address.

export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const at = hash.indexOf('?');
  const path = (at < 0 ? hash : hash.slice(0, at)).split('/').filter(Boolean).map(decodeURIComponent);
  return { path, query: new URLSearchParams(at < 0 ? '' : hash.slice(at + 1)) };
}
