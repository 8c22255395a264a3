// The entry of a worker thread that runs at the lowest CPU priority from its first line: it lowers
// the thread's priority (on Linux a thread has one of its own), then imports the module that does
// the thread's work (`workerData.entry`). Imported statically, that module and everything it imports
// would be read and compiled before any of its code ran, at the priority the thread was started
// with: a load starting its threads would take tenths of a second of CPU from the requests.

import { constants, setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';

setPriority(constants.priority.PRIORITY_LOW);
await import((workerData as { entry: string }).entry);
