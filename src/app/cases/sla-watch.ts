// The cases' SLA, watched: every CASE_SLA_SWEEP_SECONDS each process looks for open or in-progress
// cases past their due time, in every organization, and marks each breached once, with a timeline
// entry ("sla_breached", by `system`) and a `case.sla_breached` event in the same transaction
// (storage/case-events.ts). Several processes sweep at once without announcing a case twice: the
// first transaction to set its mark is the only one that writes its entry and its event.

import { organizationsWithBreaches } from '../../storage/case-events.ts';
import type { Db } from '../../storage/db.ts';
import { organizationData } from '../../storage/organization-data.ts';

export interface SlaWatchOptions {
  db: Db;
  clock: () => number;
  log: (msg: string) => void;
  everyMs: number;
}

export class SlaWatch {
  private readonly o: SlaWatchOptions;

  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;

  constructor(o: SlaWatchOptions) {
    this.o = o;
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.o.everyMs);
    this.timer.unref();
  }

  /** One sweep of every organization (one at a time); resolves with how many cases it marked. */
  sweep(): Promise<number> {
    this.sweeping ??= this.look()
      .catch((e) => {
        this.o.log(`case SLA sweep: ${(e as Error).message}`);
        return 0;
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async look(): Promise<number> {
    const at = this.o.clock();
    let marked = 0;
    for (const organizationId of await organizationsWithBreaches(this.o.db, at)) {
      marked += (await organizationData(this.o.db, organizationId).caseEvents.breach(at)).length;
    }
    return marked;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }
}
