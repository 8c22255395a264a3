// The content digest the offline tools name things by: a model's data and code fingerprints
// (train.ts) and the model text a golden file was written for (golden.ts). A code fingerprint is
// taken of what the code does, not how it is written: the syntax tree of the JavaScript a source
// runs as (types and comments gone), so formatting, comments and types never change a model's id.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/** SHA-256 of a text, hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The syntax tree of a TypeScript source's JavaScript as text: each node's kind and, for a name or
 *  a literal, its value; no whitespace, comment, type, punctuation or parenthesis a formatter may
 *  add or drop (the tree's shape carries precedence). */
export function codeShape(source: string): string {
  const js = ts.transpileModule(source, { compilerOptions: { removeComments: true, target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext } }).outputText;
  const file = ts.createSourceFile('code.js', js, ts.ScriptTarget.ESNext, false, ts.ScriptKind.JS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isParenthesizedExpression(node)) {
      visit(node.expression);
      return;
    }
    out.push(ts.SyntaxKind[node.kind]);
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) out.push(JSON.stringify(node.text));
    else if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateLiteralToken(node) ||
      ts.isNumericLiteral(node) ||
      ts.isBigIntLiteral(node) ||
      ts.isRegularExpressionLiteral(node)
    ) {
      out.push(JSON.stringify(node.text));
    }
    out.push('(');
    ts.forEachChild(node, visit);
    out.push(')');
  };
  visit(file);
  return out.join(' ');
}

/** `entry` (a path from the repository's root) and every source it imports, followed through
 *  relative imports, sorted. */
export function codeFiles(entry: string): string[] {
  const files = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+\.ts)'/g)) visit(join(dirname(file), m[1]!));
  };
  visit(entry);
  return [...files].sort();
}

/** Fingerprint of the code that shapes a model: the shape (`codeShape`) of `codeFiles(entry)`:
 *  formatting, comments and types shape no model, so changing them leaves the id as it is. */
export function codeFingerprint(entry: string): string {
  return sha256(
    codeFiles(entry)
      .map((f) => `${f}\n${codeShape(readFileSync(f, 'utf8'))}`)
      .join('\n'),
  );
}
