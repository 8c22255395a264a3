// The HTTP layer's side of counting the requests this process is working on
// (live/requests-at-work.ts): a request arrives, its answer ends. What the count is for (a large
// history's load reads between requests) is live state's; the HTTP layer only reports.

import { requestsAtWork } from '../live/requests-at-work.ts';

/** A request arrived. */
export function requestArrived(): void {
  requestsAtWork.enter();
}

/** A request's answer ended (sent, or its connection closed). */
export function requestEnded(): void {
  requestsAtWork.leave();
}
