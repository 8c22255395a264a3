// Run once before the test files (tap's `before`, .taprc): the public sandbox built and kept as a
// server keeps it under its data directory, in .tap/sandbox-data/, so that each test server's new
// data directory starts with it (temp.ts `dataDir`) instead of simulating a quarter of a million
// transactions and building their history again. Kept between runs: the Sandbox reads it back, and
// builds it afresh when the code or the settings that made it changed.

import { Sandbox } from '../../src/app/sandbox.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { PREPARED_SANDBOX } from './temp.ts';

const model = loadModelFolder('models/builtin');
if (isProblem(model)) throw new Error(model.message);
const sandbox = new Sandbox(model.file.training.label_delay_ms, PREPARED_SANDBOX);
void sandbox.ringIndex;
