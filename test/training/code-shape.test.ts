// A model's code fingerprint follows what its training code does, not how it is written: the same
// code formatted another way, with other comments or types, has the same shape; a change of what it
// computes (an operator, a constant, a name it calls) has another. And it is the training library's,
// not the command line's: a new help text leaves the built-in model's id as it is.

import t from 'tap';
import { readFileSync } from 'node:fs';
import { codeFiles, codeFingerprint, codeShape } from '../../src/training/digest.ts';

const written = `// Bands from the thresholds.
export function bands(t: { review: number; block: number }, scale = 1_000) {
  const medium = t.review * scale;
  return { medium, high: Math.max(medium, t.block * scale), label: 'high' + '!' };
}
`;

const reformatted = `/** Bands. */
export function bands(t: {review: number, block: number}, scale = 1_000): Record<string, unknown> {
  const medium = (t.review * scale)
  return {
    medium,
    high: Math.max(
      medium,
      t.block * scale,
    ),
    label: "high" + "!",
  }
}
`;

t.test('formatting, comments, types and redundant parentheses leave the shape', async (t) => {
  t.equal(codeShape(reformatted), codeShape(written));
});

t.test('a change of what the code computes changes it', async (t) => {
  for (const [what, changed] of [
    ['an operator', written.replace('t.review * scale', 't.review / scale')],
    ['a constant', written.replace('1_000', '1_001')],
    ['a string', written.replace("'high' + '!'", "'higher' + '!'")],
    ['a function called', written.replace('Math.max', 'Math.min')],
  ]) {
    t.not(codeShape(changed!), codeShape(written), what!);
  }
  // Parentheses that change the order of operations are in the tree's shape.
  t.not(
    codeShape(written.replace('t.block * scale', '(t.block + 1) * scale')),
    codeShape(written.replace('t.block * scale', 't.block + 1 * scale')),
    'precedence',
  );
});

t.test("the built-in model's fingerprint is its training library's, not the command's", async (t) => {
  // The id hashes the shape of src/training/builtin.ts and of what it imports, and nothing else:
  // the command line that calls it (its options, help texts, the organization's training it also
  // runs) is none of them, so a new help text cannot change the built-in model's id.
  const files = codeFiles('src/training/builtin.ts');
  t.ok(files.includes('src/training/train.ts') && files.includes('src/domain/features/extract.ts'), `${files.length} sources, the library and what it imports`);
  t.same(
    files.filter((f) => !f.startsWith('src/training/') && !f.startsWith('src/')),
    [],
    'none outside the training library and src/',
  );
  t.notOk(files.includes('tools/train.ts') || files.includes('src/command-line.ts'), 'no command line');
});

// The fast guard of the byte-for-byte retraining test (npm run test:training): a change to what the
// training library or a feature computes, even a refactoring that V8 would run the same, makes the
// committed model's fingerprint stale, and its id with it.
t.test("the committed built-in model carries the fingerprint of today's training code", async (t) => {
  const model = JSON.parse(readFileSync('models/builtin/model.json', 'utf8'));
  t.equal(model.code_fingerprint, codeFingerprint('src/training/builtin.ts'), 'else run `npm run train` and commit models/builtin');
});
