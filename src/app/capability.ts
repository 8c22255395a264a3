// A capability of the application: use cases bound to the dependencies they need. The use cases are
// plain functions whose first parameter is what they need (a narrow `…Deps` interface); binding
// them once, at composition, gives the HTTP layer `decisions.list(caller, …)` with no database, live
// state or service object in sight.

/** `fns` with their first parameter (the dependencies) taken away. */
export type Bound<D, F> = { readonly [K in keyof F]: F[K] extends (deps: D, ...args: infer A) => infer R ? (...args: A) => R : never };

/** Binds each use case of `fns` to `deps`. */
export function bind<D, F extends Record<string, (deps: D, ...args: never[]) => unknown>>(deps: D, fns: F): Bound<D, F> {
  const bound: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(fns)) bound[name] = (...args: unknown[]) => (f as (d: D, ...a: unknown[]) => unknown)(deps, ...args);
  return bound as Bound<D, F>;
}
