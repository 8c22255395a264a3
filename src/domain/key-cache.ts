// Keys made once and reused. The history looks the same customer, merchant and channel keys up in
// several maps for every transaction; a key built afresh each time is a new string whose hash every
// map computes again, where a kept one has its hash computed once.

/** Past this many keys a cache is emptied, so it never costs more than the maps it serves. */
export const KEY_CACHE_LIMIT = 1 << 20;

/** Keys made once and reused: a key built afresh for every lookup is a new string, which every map
 *  it is looked up in hashes again; one kept here has its hash computed once. The history holds
 *  every key it has seen anyway (as map keys); the cache is emptied if it ever grows past
 *  KEY_CACHE_LIMIT, so it costs at most as much again. */
export class KeyCache {
  private readonly make: (id: string) => string;

  private readonly keys = new Map<string, string>();

  constructor(make: (id: string) => string) {
    this.make = make;
  }

  get(id: string): string {
    let key = this.keys.get(id);
    if (key === undefined) {
      if (this.keys.size >= KEY_CACHE_LIMIT) this.keys.clear();
      this.keys.set(id, (key = this.make(id)));
    }
    return key;
  }
}
